// One named milestone of a timeline, and its time relative to the fault.
import type { Transition } from "./types.js";

export interface Milestone {
  name: string;
  /** Local receive time, ms since the fault. */
  atMs: number;
  /** The API's own timestamp for the same change, ms since the fault, when the object carried one. */
  apiAtMs?: number;
  node?: string;
  /**
   * The zone of `node` (its topology.kubernetes.io/zone label when the fault started), or of a
   * zone-state milestone; absent when not known. The timeline chart groups by it.
   */
  zone?: string;
}

/** When `t` happened relative to the fault (receive time and API time), and on which node. */
export function relative(t: Transition, faultAtMs: number): Pick<Milestone, "atMs" | "apiAtMs" | "node"> {
  const api = t.apiTime ? Date.parse(t.apiTime) : Number.NaN;
  return {
    atMs: t.atMs - faultAtMs,
    ...(Number.isFinite(api) ? { apiAtMs: api - faultAtMs } : {}),
    ...(t.node ? { node: t.node } : {}),
  };
}
