// Import cycles of a file graph (file → the files it imports): its strongly connected components
// (Tarjan's algorithm), and in each the shortest cycle through every one of its files, printed as
// "a.ts → b.ts → a.ts". test/unit/import-cycles.test.ts runs it on lib/, suites/, tools/ and bench/.

export type FileGraph = ReadonlyMap<string, readonly string[]>;

/** The strongly connected components of `graph` that hold a cycle (two files or more, or a self-import). */
export function cyclicComponents(graph: FileGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file) ?? 0);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    for (;;) {
      const top = stack.pop() ?? file;
      onStack.delete(top);
      component.push(top);
      if (top === file) break;
    }
    const selfImport = graph.get(file)?.includes(file) === true;
    if (component.length > 1 || selfImport) components.push(component.sort());
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file);
  return components.sort((a, b) => (a[0] ?? "").localeCompare(b[0] ?? ""));
}

/** The shortest path from `start` back to itself inside `members` (breadth first), start at both ends. */
function shortestCycle(graph: FileGraph, start: string, members: ReadonlySet<string>): string[] {
  const cameFrom = new Map<string, string>();
  let frontier = [start];
  while (frontier.length > 0) {
    const next: string[] = [];
    for (const file of frontier) {
      for (const target of graph.get(file) ?? []) {
        if (!members.has(target)) continue;
        if (target === start) {
          const path: string[] = [];
          for (let at: string | undefined = file; at !== undefined && at !== start; at = cameFrom.get(at)) {
            path.unshift(at);
          }
          return [start, ...path, start];
        }
        if (cameFrom.has(target)) continue;
        cameFrom.set(target, file);
        next.push(target);
      }
    }
    frontier = next;
  }
  return [];
}

/** `cycle` (first file repeated at the end) rotated to start at its least file, so equal cycles compare equal. */
function canonical(cycle: readonly string[]): string[] {
  const ring = cycle.slice(0, -1);
  const least = ring.reduce((a, b) => (b < a ? b : a));
  const at = ring.indexOf(least);
  const rotated = [...ring.slice(at), ...ring.slice(0, at)];
  return [...rotated, least];
}

/**
 * Each cycle of `graph`: per strongly connected component, the shortest cycle through each of its
 * files (so every file on a cycle appears in one), each once, starting at its least file.
 */
export function importCycles(graph: FileGraph): string[][] {
  const cycles = new Map<string, string[]>();
  for (const component of cyclicComponents(graph)) {
    const members = new Set(component);
    for (const file of component) {
      const found = shortestCycle(graph, file, members);
      if (found.length === 0) continue;
      const cycle = canonical(found);
      cycles.set(cycle.join("\n"), cycle);
    }
  }
  return [...cycles.values()].sort((a, b) => a.join("\n").localeCompare(b.join("\n")));
}

/** "a.ts → b.ts → a.ts". */
export function formatCycle(cycle: readonly string[]): string {
  return cycle.join(" → ");
}
