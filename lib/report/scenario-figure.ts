// What a scenario measured, in a few words, for the end-of-run lines and the sign-off. Decided
// from the scenario's own expected windows: one that expects a workload back (a `…:recovered`
// milestone with a deadline) reports its recovery; one that expects none (preflight, the guards,
// most safety scenarios) reports its key milestone, or that nothing it forbids happened.
import type { ScenarioSummary } from "./summary.js";

const RECOVERED = ":recovered";

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** Whether the scenario expects some workload to be serving again by a deadline. */
export function expectsRecovery(scenario: Pick<ScenarioSummary, "expected">): boolean {
  return scenario.expected.some((e) => e.name.endsWith(RECOVERED) && e.maxMs !== null);
}

/**
 * "recovered in 12.3s"; "not recovered (deployment:recovered at 30.1s)"; "no recovery expected;
 * key milestone fence:power-management:done at 8.2s"; "no recovery expected; 6 of 6 forbidden
 * milestones absent"; "no recovery expected".
 */
export function scenarioFigure(scenario: ScenarioSummary): string {
  const at = new Map(scenario.milestones.map((m) => [m.name, m.atMs]));
  if (expectsRecovery(scenario)) {
    if (scenario.recoveryMs !== null) return `recovered in ${seconds(scenario.recoveryMs)}`;
    const partial = scenario.milestones.filter((m) => m.name.endsWith(RECOVERED));
    return partial.length === 0
      ? "not recovered"
      : `not recovered (${partial.map((m) => `${m.name} at ${seconds(m.atMs)}`).join(", ")})`;
  }
  if (scenario.recoveryMs !== null) return `recovered in ${seconds(scenario.recoveryMs)}`;
  // The last milestone with a deadline that came: where the scenario's expected chain got to.
  const key = [...scenario.expected]
    .reverse()
    .find((e) => e.maxMs !== null && e.name !== "fault-injected" && at.has(e.name));
  const forbidden = scenario.expected.filter((e) => e.maxMs === null);
  const absent = forbidden.filter((e) => !at.has(e.name)).length;
  const parts = ["no recovery expected"];
  if (key !== undefined) parts.push(`key milestone ${key.name} at ${seconds(at.get(key.name) ?? 0)}`);
  if (forbidden.length > 0) parts.push(`${absent} of ${forbidden.length} forbidden milestones absent`);
  return parts.join("; ");
}
