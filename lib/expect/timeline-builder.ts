// Builds one expected timeline from raw windows (not yet widened by slack), keeping each
// milestone's nominal bounds since the fault so that two mechanisms racing for the same milestone
// can be combined ("the earlier of …") and slack is added once, at the end.
import type { ExpectedMilestone } from "./windows.js";

export const FAULT = "fault-injected";

/** A window as written: `keepMin` leaves the lower bound unwidened (a mark that cannot come early). */
export interface RawWindow extends ExpectedMilestone {
  keepMin?: boolean;
}

/** Nominal bounds since the fault; maxMs null: never. */
export interface Bounds {
  minMs: number;
  maxMs: number | null;
}

export function raw(
  name: string,
  after: string,
  minMs: number,
  maxMs: number | null,
  why: string,
): RawWindow {
  return { name, after, minMs, maxMs, why };
}

export class TimelineBuilder {
  private readonly out: RawWindow[] = [];
  private readonly nominal = new Map<string, Bounds>([[FAULT, { minMs: 0, maxMs: 0 }]]);

  /** `context`: windows known (the node's) whose bounds anchor this timeline's, not part of its output. */
  constructor(context: readonly RawWindow[] = [], anchors: Readonly<Record<string, number>> = {}) {
    for (const [name, at] of Object.entries(anchors)) this.nominal.set(name, { minMs: at, maxMs: at });
    for (const w of context) this.track(w);
  }

  private chained(w: RawWindow): Bounds | undefined {
    const anchor = this.nominal.get(w.after);
    if (anchor === undefined) return undefined;
    return {
      minMs: anchor.minMs + w.minMs,
      maxMs: w.maxMs === null || anchor.maxMs === null ? null : anchor.maxMs + w.maxMs,
    };
  }

  private track(w: RawWindow): void {
    const bounds = this.chained(w);
    if (bounds !== undefined && !this.nominal.has(w.name)) this.nominal.set(w.name, bounds);
  }

  /** Nominal bounds of a milestone since the fault, when its chain reaches the fault. */
  bounds(name: string): Bounds | undefined {
    return this.nominal.get(name);
  }

  /** Whether the milestone is expected (finite window) in this timeline or its context. */
  expects(name: string): boolean {
    const b = this.nominal.get(name);
    return b !== undefined && b.maxMs !== null;
  }

  add(w: RawWindow): RawWindow {
    this.out.push(w);
    this.track(w);
    return w;
  }

  window(name: string, after: string, minMs: number, maxMs: number | null, why: string): RawWindow {
    return this.add(raw(name, after, minMs, maxMs, why));
  }

  never(name: string, why: string, after = FAULT): RawWindow {
    return this.add(raw(name, after, 0, null, why));
  }

  /**
   * The earliest of several mechanisms for one milestone. One finite candidate: that one as written.
   * One certainly first (its latest no later than every other's earliest): that one. Otherwise
   * from the fault, the smallest earliest and smallest latest. None finite: never. Undefined (and
   * nothing added) when a candidate's anchor has no bounds here.
   */
  earliest(name: string, candidates: readonly RawWindow[], why: string): RawWindow | undefined {
    const finite = candidates.filter((c) => c.maxMs !== null);
    if (finite.length === 0) return this.never(name, why);
    const only = finite[0];
    if (finite.length === 1 && only !== undefined) return this.add({ ...only, name });
    const bounds = finite.map((c) => this.chained(c));
    if (bounds.some((b) => b === undefined)) return undefined;
    const known = bounds as Bounds[];
    const max = (b: Bounds) => b.maxMs ?? Number.POSITIVE_INFINITY;
    const first = known.findIndex((b, i) => known.every((o, j) => i === j || max(b) <= o.minMs));
    const chosen = finite[first];
    if (chosen !== undefined) return this.add({ ...chosen, name });
    return this.window(name, FAULT, Math.min(...known.map((b) => b.minMs)), Math.min(...known.map(max)), why);
  }

  /**
   * The latest of several conditions a milestone waits for, then [0, afterMs] more. One certainly
   * last: anchored on it. Otherwise from the fault. Undefined when an anchor has no bounds.
   */
  afterAll(name: string, anchors: readonly string[], maxMs: number, why: string): RawWindow | undefined {
    const known = anchors.map((a) => this.nominal.get(a));
    if (known.some((b) => b === undefined)) return undefined;
    const bounds = known as Bounds[];
    if (bounds.some((b) => b.maxMs === null)) return this.never(name, why);
    const max = (b: Bounds) => b.maxMs ?? Number.POSITIVE_INFINITY;
    const last = bounds.findIndex((b, i) => bounds.every((o, j) => i === j || b.minMs >= max(o)));
    const anchor = anchors[last];
    if (anchor !== undefined) return this.window(name, anchor, 0, maxMs, why);
    return this.window(
      name,
      FAULT,
      Math.max(...bounds.map((b) => b.minMs)),
      Math.max(...bounds.map(max)) + maxMs,
      why,
    );
  }

  /**
   * The windows, each widened by `slackMs` on both sides (never below zero, or below a window's own
   * negative lower bound, WATCH_SKEW_MS's; `keepMin` lower bounds kept).
   */
  windows(slackMs: number): ExpectedMilestone[] {
    return this.out.map(({ keepMin, ...w }) => ({
      ...w,
      minMs: keepMin === true ? w.minMs : Math.max(Math.min(0, w.minMs), w.minMs - slackMs),
      maxMs: w.maxMs === null ? null : w.maxMs + slackMs,
    }));
  }
}
