// Checks a recorded timeline against the expected one. A mismatch is a TimelineMismatchError whose
// message shows expected and actual side by side; the scenario verdict reports it.
import { RekindleError } from "../errors.js";
import type { Milestone } from "../observe/milestones.js";
import { KUBELET_POD_RETRY_MAX_MS, KUBELET_POD_RETRY_MIN_MS } from "../observe/volume-warnings.js";
import type { ExpectedMilestone } from "./model.js";

export type Verdict = "ok" | "early" | "late" | "missing" | "unexpected" | "anchor-missing";

export interface WindowCheck {
  name: string;
  after: string;
  /** Window in ms since the fault, resolved against the anchor's actual time. */
  minMs?: number;
  maxMs?: number | null;
  actualMs?: number;
  verdict: Verdict;
  why: string;
  /** Set when the window was extended by a known transient delay the run recorded (see below). */
  explained?: string;
}

/** A workload's pod milestones that a kubelet retry of its replacement delays. */
const RETRY_DELAYED = /^(.+):(replacement-running|replacement-ready|recovered)$/;

/**
 * A replacement whose volume setup hit a known race of a real cluster (`<workload>:kubelet-retry`,
 * see volume-warnings.ts) starts one kubelet pod-worker backoff later: that workload's later pod
 * milestones get the backoff's maximum on top of their window. Only if the retry can have caused
 * the lateness: the retry was still pending at the window's anchor (the error came less than the
 * backoff's maximum before it: on kind the kubelet can fail the replacement's first sync before
 * the volume's attach, the anchor, and retry only after it, 2026-11-26) and the error came at
 * least the backoff's minimum before the milestone (the kubelet does not try the pod again sooner,
 * so a milestone within that minimum of the error was not delayed by it). Nothing else is ever
 * widened, and the check says why it was.
 */
function retryAllowance(
  name: string,
  anchorMs: number,
  actualMs: number,
  at: ReadonlyMap<string, number>,
): { extraMs: number; explained: string } | undefined {
  const workload = RETRY_DELAYED.exec(name)?.[1];
  if (workload === undefined) return undefined;
  const retryMs = at.get(`${workload}:kubelet-retry`);
  if (retryMs === undefined || retryMs + KUBELET_POD_RETRY_MAX_MS <= anchorMs) return undefined;
  if (actualMs - retryMs < KUBELET_POD_RETRY_MIN_MS) return undefined;
  return {
    extraMs: KUBELET_POD_RETRY_MAX_MS,
    explained: `window + ${KUBELET_POD_RETRY_MAX_MS / 1000}s: the kubelet retried the replacement after a transient volume error at ${seconds(retryMs)}, ${seconds(actualMs - retryMs)} before (${workload}:kubelet-retry)`,
  };
}

export function checkTimeline(
  expected: readonly ExpectedMilestone[],
  milestones: readonly Milestone[],
): WindowCheck[] {
  const at = new Map(milestones.map((m) => [m.name, m.atMs]));
  return expected.map((e): WindowCheck => {
    const actual = at.get(e.name);
    const base = {
      name: e.name,
      after: e.after,
      why: e.why,
      ...(actual !== undefined ? { actualMs: actual } : {}),
    };
    const anchor = at.get(e.after);
    if (e.maxMs === null) {
      // "Never": any occurrence is a failure, whether or not the anchor was seen.
      return {
        ...base,
        maxMs: null,
        ...(anchor !== undefined ? { minMs: anchor + e.minMs } : {}),
        verdict: actual === undefined ? "ok" : "unexpected",
      };
    }
    if (anchor === undefined) return { ...base, verdict: "anchor-missing" };
    const minMs = anchor + e.minMs;
    const maxMs = anchor + e.maxMs;
    const verdict: Verdict =
      actual === undefined ? "missing" : actual < minMs ? "early" : actual > maxMs ? "late" : "ok";
    const allowance =
      verdict === "late" && actual !== undefined ? retryAllowance(e.name, anchor, actual, at) : undefined;
    if (allowance && actual !== undefined && actual <= maxMs + allowance.extraMs) {
      return {
        ...base,
        minMs,
        maxMs: maxMs + allowance.extraMs,
        verdict: "ok",
        explained: allowance.explained,
      };
    }
    return { ...base, minMs, maxMs, verdict };
  });
}

function seconds(ms: number | undefined | null): string {
  if (ms === undefined) return "—";
  if (ms === null) return "never";
  return `${(ms / 1000).toFixed(1)}s`;
}

export function formatChecks(checks: readonly WindowCheck[]): string {
  const rows = checks.map((c) => [
    c.name,
    `after ${c.after}`,
    `${seconds(c.minMs)} … ${seconds(c.maxMs)}`,
    seconds(c.actualMs),
    c.verdict !== "ok" ? `✗ ${c.verdict}` : c.explained !== undefined ? `ok (${c.explained})` : "ok",
  ]);
  const header = ["milestone", "anchor", "expected (since fault)", "actual", "verdict"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ");
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

export class TimelineMismatchError extends RekindleError {
  readonly checks: readonly WindowCheck[];

  constructor(scenario: string, checks: readonly WindowCheck[]) {
    const failed = checks.filter((c) => c.verdict !== "ok");
    super(
      "TIMELINE_MISMATCH",
      `${scenario}: ${failed.length} milestone(s) outside the expected timeline (${failed.map((c) => `${c.name} ${c.verdict}`).join(", ")})\n${formatChecks(checks)}`,
      {
        details: { scenario, checks },
      },
    );
    this.checks = checks;
  }
}

/** The mismatch error for these checks, or undefined when every milestone is within its window. */
export function timelineMismatch(
  scenario: string,
  checks: readonly WindowCheck[],
): TimelineMismatchError | undefined {
  return checks.some((c) => c.verdict !== "ok") ? new TimelineMismatchError(scenario, checks) : undefined;
}
