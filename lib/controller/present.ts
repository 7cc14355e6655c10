// Decisions made on the present: a pass decides on what it read at its start, but a side effect
// that would hurt a live node (the claim that starts a fence, a power-off, the out-of-service
// taint, a cleanup pass) is taken only if the node is still lost at the moment it is taken. A pass
// may have waited meanwhile on a slow driver or API call, and a node judged lost then may have
// renewed since: its Lease, as the watch cache holds it at that moment, says so.
import { errorMessage } from "../errors.js";
import { assessNode } from "./detect.js";
import type { NodeObservation } from "./observations.js";

/** What a side effect needs to know of a node right now. */
export interface CurrentNode {
  /** The node's Lease renewTime now (another machine's clock: compared for change only), if it has a Lease. */
  renewTime: string | undefined;
  /** The node's Ready condition now; read only for a node without a Lease. */
  ready?: string | undefined;
}

/**
 * Reads the current state of one node: the controller's reads it from its watch caches
 * (cluster-caches.ts), which throw while the Lease or Node watch is not current (the node is then
 * not known lost). Undefined: the node is gone.
 */
export type CurrentNodeReader = (node: string) => Promise<CurrentNode | undefined>;

export type LostNow = { lost: true; reason: string } | { lost: false; why: string };

export interface LostNowInput {
  read: CurrentNodeReader;
  /** What this controller observed of the node, as of its last pass. */
  observation: Readonly<NodeObservation> | undefined;
  /** The controller's monotonic clock (ms). */
  now: () => number;
  unhealthyAfterMs: number;
}

/**
 * Is `node` lost at this moment? Only when its current state says nothing new since the pass's
 * read (the same Lease renewTime; for a node without a Lease, still not Ready) and, on the
 * controller's own clock taken before this read, its silence is longer than unhealthyAfter. A node
 * that cannot be read now is not known lost: the side effect waits for the next pass.
 */
export async function lostNow(node: string, input: LostNowInput): Promise<LostNow> {
  const observation = input.observation;
  if (!observation) return { lost: false, why: "not observed by this controller" };
  // The silence is counted up to the read's start: whatever the read returns was true by then.
  const at = input.now();
  let current: CurrentNode | undefined;
  try {
    current = await input.read(node);
  } catch (error) {
    return { lost: false, why: `its state could not be read now (${errorMessage(error)})` };
  }
  if (current === undefined) return { lost: false, why: "it is gone from the API" };
  if (current.renewTime !== observation.renewTime) {
    return { lost: false, why: "it renewed its Lease since this pass read it" };
  }
  if (current.renewTime === undefined && current.ready === "True") {
    return { lost: false, why: "it is Ready again" };
  }
  const health = assessNode(observation, at, input.unhealthyAfterMs);
  if (health.state !== "unhealthy") return { lost: false, why: `it is ${health.state} now` };
  return { lost: true, reason: health.reason };
}
