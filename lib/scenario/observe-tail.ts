// The end of a scenario's watch: keep observing until every expected milestone has come or its
// window has closed, so a run never stops before a milestone it expects could be seen.
import { nominalWindows } from "../expect/windows.js";
import { pollUntil } from "../util/time.js";
import type { ScenarioContext } from "./harness.js";

/** How long a scenario keeps watching after its last awaited milestone at most (for "never" windows). */
export const MAX_OBSERVE_MS = 10 * 60_000;

/**
 * Keeps observing until every finite window's milestone has come or its window has closed, so
 * "never" windows are watched as long as the slowest expected milestone (at most MAX_OBSERVE_MS).
 */
export async function observeTail(context: ScenarioContext): Promise<void> {
  const finite = nominalWindows(context.expectedTimeline()).filter(
    (w): w is typeof w & { maxMs: number } => w.maxMs !== null,
  );
  const slackMs = context.inputs.slackMs;
  const settled = () => {
    const seen = new Set(context.milestones().map((m) => m.name));
    const now = context.sinceFaultMs();
    return finite.every((w) => seen.has(w.name) || now > w.maxMs + slackMs) || now > MAX_OBSERVE_MS;
  };
  await context.steps.step("observe until every expected window has settled", () =>
    pollUntil(async () => Promise.resolve(settled() ? true : undefined), {
      what: "every expected window settled",
      timeoutMs: MAX_OBSERVE_MS + 60_000,
      intervalMs: 500,
      ...(context.signal ? { signal: context.signal } : {}),
    }),
  );
}

/**
 * Awaits each milestone the expected timeline gives a finite window, in order; one it does not
 * expect (a workload the fault did not touch, a volume with no attach step) is passed over.
 */
export async function awaitExpected(context: ScenarioContext, ...names: string[]): Promise<void> {
  for (const name of names) {
    if (context.expectedTimeline().some((w) => w.name === name && w.maxMs !== null))
      await context.awaitMilestone(name);
  }
}
