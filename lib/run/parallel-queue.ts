// The work queue of `rekindle run --parallel`: every selected scenario once, longest expected first;
// a cluster takes the next one whenever it is free. A queue, not a plan made in advance, because
// the catalogue's windows do not know setup, cleanup or a slow cluster: a cluster that finishes
// early simply takes more. Longest first, because a long scenario taken last would leave every
// other cluster idle while it runs (list scheduling with the longest first ends within 4/3 of the
// best possible assignment; the order alone cannot stack the long ones on one cluster, since a
// cluster busy with one is not free to take the next).
import type { ScenarioGroup } from "./suite.js";

/** One scenario of the selection and how long it is expected to run (ms from the fault). */
export interface QueuedScenario {
  id: string;
  expectedMs: number;
  /**
   * The sim workers it needs when more than the default layout's 3 (ScenarioDefinition.minWorkers):
   * only a cluster of that size takes it (parallel-sizes.ts); undefined: a default-sized cluster.
   */
  workers?: number;
}

/** What a cluster's run asks for its next scenario; undefined when there is none left. */
export interface ScenarioSource {
  next(): Promise<string | undefined>;
}

/** The selection longest expected first; equal lengths in selection order (stable). */
export function queueOrder(scenarios: readonly QueuedScenario[]): string[] {
  return ordered(scenarios).map((s) => s.id);
}

function ordered(scenarios: readonly QueuedScenario[]): QueuedScenario[] {
  return scenarios
    .map((s, index) => ({ s, index }))
    .sort((a, b) => b.s.expectedMs - a.s.expectedMs || a.index - b.index)
    .map(({ s }) => s);
}

/** What a cluster takes: the scenarios of the default layout, those needing a sized cluster, or either. */
export type ClusterKind = "default" | "sized" | "any";

/** Whether a scenario needs a cluster sized for it (more workers than the default layout's 3). */
export function needsSizedCluster(scenario: QueuedScenario): boolean {
  return scenario.workers !== undefined && scenario.workers > 3;
}

/** Whether a cluster of `kind` takes `scenario` (ScenarioQueue.take). */
function takes(kind: ClusterKind, scenario: QueuedScenario): boolean {
  return kind === "any" || needsSizedCluster(scenario) === (kind === "sized");
}

/** The queue the clusters draw from; `close()` (an interrupt) leaves nothing more to take. */
export class ScenarioQueue {
  readonly #pending: QueuedScenario[];
  readonly #taken = new Map<string, number>();
  #closed = false;

  constructor(scenarios: readonly QueuedScenario[]) {
    this.#pending = ordered(scenarios);
  }

  /**
   * The next scenario for cluster `slot`, or undefined when none is left for it. `sized`: the
   * cluster was sized for the scenarios that need more workers and takes only those; otherwise it
   * takes only the others (unless `any`: one cluster for a mixed selection takes everything, and
   * the run skips what its size cannot hold).
   */
  take(slot: number, kind: ClusterKind = "any"): string | undefined {
    if (this.#closed) return undefined;
    const index = this.#pending.findIndex((s) => takes(kind, s));
    if (index < 0) return undefined;
    const [scenario] = this.#pending.splice(index, 1);
    if (scenario === undefined) return undefined;
    this.#taken.set(scenario.id, slot);
    return scenario.id;
  }

  /** Whether a cluster of `kind` would be handed something now. */
  hasPendingFor(kind: ClusterKind): boolean {
    return !this.#closed && this.#pending.some((s) => takes(kind, s));
  }

  close(): void {
    this.#closed = true;
  }

  /** The scenarios not taken by any cluster (after an interrupt, or when every cluster broke). */
  get left(): readonly string[] {
    return this.#pending.map((s) => s.id);
  }

  /** Which cluster took each scenario so far. */
  get taken(): ReadonlyMap<string, number> {
    return this.#taken;
  }
}

/** The groups cut to one scenario (its group only). */
export function groupsOf(groups: readonly ScenarioGroup[], id: string): ScenarioGroup[] {
  return groups
    .map((g) => ({ ...g, scenarios: g.scenarios.filter((s) => s.definition.id === id) }))
    .filter((g) => g.scenarios.length > 0);
}

/**
 * Runs the scenarios `source` hands out one at a time on this cluster (`runGroups` runs mocha on
 * the groups it is given) until it has none left or the run is interrupted; returns mocha's
 * failure count over all of them. A scenario this cluster's groups do not hold is an error: the
 * queue and the selection disagree.
 */
export async function drainQueue(
  source: ScenarioSource,
  groups: readonly ScenarioGroup[],
  runGroups: (groups: ScenarioGroup[]) => Promise<number>,
  signal: AbortSignal,
): Promise<number> {
  let failures = 0;
  while (!signal.aborted) {
    const id = await source.next();
    if (id === undefined) break;
    const one = groupsOf(groups, id);
    if (one.length === 0) throw new Error(`the queue handed out ${id}, which this run did not select`);
    failures += await runGroups(one);
  }
  return failures;
}
