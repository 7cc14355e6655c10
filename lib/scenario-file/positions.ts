// Where each key and value of a parsed YAML document was written, by JSON pointer ("/spec/fault/type"),
// so an error found in the plain data (by the schema or the checks) can name file:line:column.
import { isMap, isScalar, isSeq, type LineCounter, type Node } from "yaml";
import type { SourcePosition } from "./types.js";

export interface DocumentPositions {
  /** The file as errors name it. */
  file: string;
  /** Each mapping key (at its key) and each sequence item (at the item), as ScenarioFile.positions holds them. */
  keys: Map<string, SourcePosition>;
  /** Each value (mapping value or sequence item), where it starts. */
  values: Map<string, SourcePosition>;
}

/** One JSON-pointer segment: "~" and "/" escaped as RFC 6901 says (ajv's instancePath does the same). */
export function escapePointer(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

export function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, "/").replace(/~0/g, "~");
}

/** "/spec/workloads/0/name" → "spec.workloads[0].name"; "" → "the file". */
export function pointerLabel(pointer: string): string {
  if (pointer === "") return "the file";
  let label = "";
  for (const raw of pointer.split("/").slice(1)) {
    const segment = unescapePointer(raw);
    if (/^\d+$/.test(segment)) label += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) label += label === "" ? segment : `.${segment}`;
    else label += `[${JSON.stringify(segment)}]`;
  }
  return label;
}

/** The pointer of the enclosing value: "/a/b" → "/a"; "" stays "". */
export function parentPointer(pointer: string): string {
  const slash = pointer.lastIndexOf("/");
  return slash <= 0 ? "" : pointer.slice(0, slash);
}

/** Walks `root` (a document's contents), recording every key's and value's position. */
export function documentPositions(
  root: Node | null,
  lineCounter: LineCounter,
  file: string,
): DocumentPositions {
  const positions: DocumentPositions = { file, keys: new Map(), values: new Map() };
  const at = (offset: number): SourcePosition => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, column: col };
  };
  const walk = (node: unknown, pointer: string): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = pair.key;
        const name = isScalar(key) ? String(key.value) : String(key);
        const child = `${pointer}/${escapePointer(name)}`;
        const keyStart = isScalar(key) ? key.range?.[0] : undefined;
        if (keyStart !== undefined) positions.keys.set(child, at(keyStart));
        const valueStart = rangeStart(pair.value);
        const where = valueStart ?? keyStart;
        if (where !== undefined) positions.values.set(child, at(where));
        walk(pair.value, child);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => {
        const child = `${pointer}/${index}`;
        const start = rangeStart(item);
        if (start !== undefined) {
          positions.keys.set(child, at(start));
          positions.values.set(child, at(start));
        }
        walk(item, child);
      });
    }
  };
  const rootStart = rangeStart(root);
  positions.values.set("", rootStart === undefined ? { file, line: 1, column: 1 } : at(rootStart));
  walk(root, "");
  return positions;
}

function rangeStart(node: unknown): number | undefined {
  if (typeof node !== "object" || node === null || !("range" in node)) return undefined;
  const range = (node as { range?: readonly number[] | null }).range;
  return range?.[0];
}

/**
 * The best position for an error about `pointer`: its value (or its key, with `preferKey`), else
 * the nearest enclosing value that was written (a key the data has but the file does not, such as
 * one an alias brought in).
 */
export function positionOf(positions: DocumentPositions, pointer: string, preferKey = false): SourcePosition {
  for (let current = pointer; ; current = parentPointer(current)) {
    const found =
      (preferKey ? positions.keys.get(current) : undefined) ??
      positions.values.get(current) ??
      positions.keys.get(current);
    if (found !== undefined) return found;
    if (current === "") break;
  }
  // documentPositions always records the root; only a hand-made map gets here.
  return { file: positions.file, line: 1, column: 1 };
}
