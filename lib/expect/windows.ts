// Expected windows, whatever the scenario: a milestone expected within [min, max] of an anchor
// milestone (or never), widened by the profile's slack, and chained from the fault into the
// nominal prediction of the whole timeline.

export interface ExpectedMilestone {
  name: string;
  /** Milestone the window is measured from ("fault-injected" for the fault itself). */
  after: string;
  minMs: number;
  /** null: must NOT happen while the scenario observes. */
  maxMs: number | null;
  /** One line: which knob or mechanism sets this window. */
  why: string;
}

export type WindowFn = (
  name: string,
  after: string,
  minMs: number,
  maxMs: number | null,
  why: string,
) => ExpectedMilestone;

/** Windows widened by `slackMs` on both sides (never below zero). */
export function windowMaker(slackMs: number): WindowFn {
  return (name, after, minMs, maxMs, why) => widened({ name, after, minMs, maxMs, why }, slackMs);
}

/**
 * The window widened by `slackMs` on both sides, never below zero, or below its own negative lower
 * bound (a window across two watches opens WATCH_SKEW_MS before its anchor); a "never" stays as it is.
 */
export function widened(window: ExpectedMilestone, slackMs: number): ExpectedMilestone {
  return {
    ...window,
    minMs: Math.max(Math.min(0, window.minMs), window.minMs - slackMs),
    maxMs: window.maxMs === null ? null : window.maxMs + slackMs,
  };
}

/** A milestone that must not happen while the scenario observes (after `after`, default the fault). */
export function never(name: string, why: string, after = "fault-injected"): ExpectedMilestone {
  return { name, after, minMs: 0, maxMs: null, why };
}

export interface NominalWindow {
  name: string;
  /** ms after the fault; maxMs null = never. */
  minMs: number;
  maxMs: number | null;
}

/**
 * Chains every window from the fault: the prediction for the whole timeline. Milestones that hang
 * off a manual action (the out-of-service taint) are chained from `manualActionAtMs` when given.
 */
export function nominalWindows(
  expected: readonly ExpectedMilestone[],
  anchors: Record<string, number> = { "fault-injected": 0 },
): NominalWindow[] {
  const resolved = new Map<string, NominalWindow>(
    Object.entries(anchors).map(([name, at]) => [name, { name, minMs: at, maxMs: at }]),
  );
  const out: NominalWindow[] = [];
  let progress = true;
  while (progress) {
    progress = false;
    for (const e of expected) {
      if (resolved.has(e.name)) continue;
      const anchor = resolved.get(e.after);
      if (!anchor) continue;
      const window: NominalWindow = {
        name: e.name,
        minMs: anchor.minMs + e.minMs,
        maxMs: e.maxMs === null || anchor.maxMs === null ? null : anchor.maxMs + e.maxMs,
      };
      resolved.set(e.name, window);
      out.push(window);
      progress = true;
    }
  }
  return out;
}

/**
 * Two watches report one change each in their own stream, so a change may arrive before the one
 * that caused it: kind showed a Service serving 12 ms before the pod watch delivered the Ready
 * behind it, the sim a VolumeAttachment gone 1 ms before the pod deletion that let it go (and the
 * controller-manager's forced-detach line 11 ms before). Windows across two watches open this
 * much before their anchor.
 */
export const WATCH_SKEW_MS = 1000;
