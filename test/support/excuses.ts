// The gate allows no excuse (issue 23): a run in which a milestone passed only because a known
// transient delay widened its window (summary.json's `runs[].explained`, today only the
// kubelet-retry allowance of lib/expect/assert.ts) fails the test that ran it. A user's run still
// passes with the excuse and says so; the gate must not, or a real regression that happens to
// follow a transient volume error would hide behind it.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RunSummary } from "../../lib/report/summary.js";

/** "<scenario> (run i/n): <milestone at …: why it was excused>" for every excused milestone. */
export function excusesIn(summary: Pick<RunSummary, "scenarios">): string[] {
  return summary.scenarios.flatMap((s) =>
    s.runs.flatMap((run, i) =>
      (run.explained ?? []).map((note) => `${s.id} (run ${i + 1}/${s.runs.length}): ${note}`),
    ),
  );
}

/** The error for a run whose summary lists excuses, or undefined when it needed none. */
export function excuseError(summary: Pick<RunSummary, "scenarios">): Error | undefined {
  const excuses = excusesIn(summary);
  if (excuses.length === 0) return undefined;
  return new Error(
    `the gate allows no excused milestone, and this run needed ${excuses.length}:\n${excuses.map((e) => `  ${e}`).join("\n")}`,
  );
}

/**
 * Throws when `reportDir`'s summary.json lists an excused milestone. Without a readable summary
 * there is nothing to check here (the caller's own assertions say why the run wrote none).
 */
export function expectNoExcuse(reportDir: string): void {
  const path = join(reportDir, "summary.json");
  if (!existsSync(path)) return;
  let summary: RunSummary;
  try {
    summary = JSON.parse(readFileSync(path, "utf8")) as RunSummary;
  } catch {
    return; // an unreadable summary is the caller's schema check's to report
  }
  const error = excuseError({ scenarios: Array.isArray(summary.scenarios) ? summary.scenarios : [] });
  if (error) throw error;
}
