// What a scenario measured, in a few words, for the end-of-run lines and the sign-off. Decided
// from data the summary has: its recovery time when every tracked workload came back; else the
// `…:recovered` milestones its expected windows give a deadline (what came, what did not); a
// scenario that expects none (preflight, the guards, most safety scenarios) says "no recovery
// expected" and its key milestone; anything with must-not-happen windows how many stayed absent;
// and a scenario with budgets (a scenario file's) how many of them every run met.
import type { ScenarioSummary } from "./summary-types.js";

const RECOVERED = ":recovered";

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** The `…:recovered` milestones the scenario expects by a deadline. */
export function expectedRecoveries(scenario: Pick<ScenarioSummary, "expected">): string[] {
  return scenario.expected.filter((e) => e.name.endsWith(RECOVERED) && e.maxMs !== null).map((e) => e.name);
}

function recoveries(names: readonly string[], at: ReadonlyMap<string, number>): string {
  const missing = names.filter((n) => !at.has(n));
  if (missing.length > 0) {
    const came = names.filter((n) => at.has(n)).map((n) => `${n} at ${seconds(at.get(n) ?? 0)}`);
    return [`not recovered: ${missing.join(", ")} missing`, ...came].join("; ");
  }
  const last = [...names].sort((a, b) => (at.get(b) ?? 0) - (at.get(a) ?? 0))[0] ?? "";
  const lastText = `${last} at ${seconds(at.get(last) ?? 0)}`;
  return names.length === 1 ? lastText : `${names.length} expected recoveries, the last ${lastText}`;
}

/**
 * "recovered in 12.3s"; "deployment:recovered at 30.1s; 5 of 5 forbidden milestones absent";
 * "not recovered: statefulset:recovered missing; deployment:recovered at 9.0s"; "no recovery
 * expected; key milestone fence:power-management:done at 8.2s; 6 of 6 forbidden milestones absent";
 * "recovered in 52.3s; 1 of 2 budgets met".
 */
export function scenarioFigure(scenario: ScenarioSummary): string {
  const budgets = scenario.budgets ?? [];
  const met =
    budgets.length > 0 ? `; ${budgets.filter((b) => b.passed).length} of ${budgets.length} budgets met` : "";
  return `${timelineFigure(scenario)}${met}`;
}

function timelineFigure(scenario: ScenarioSummary): string {
  if (scenario.recoveryMs !== null) return `recovered in ${seconds(scenario.recoveryMs)}`;
  const at = new Map(scenario.milestones.map((m) => [m.name, m.atMs]));
  const expected = expectedRecoveries(scenario);
  const parts: string[] = [];
  if (expected.length > 0) parts.push(recoveries(expected, at));
  else {
    parts.push("no recovery expected");
    // The last milestone with a deadline that came: where the scenario's expected chain got to.
    const key = [...scenario.expected]
      .reverse()
      .find((e) => e.maxMs !== null && e.name !== "fault-injected" && at.has(e.name));
    if (key !== undefined) parts.push(`key milestone ${key.name} at ${seconds(at.get(key.name) ?? 0)}`);
  }
  const forbidden = scenario.expected.filter((e) => e.maxMs === null);
  const absent = forbidden.filter((e) => !at.has(e.name)).length;
  if (forbidden.length > 0) parts.push(`${absent} of ${forbidden.length} forbidden milestones absent`);
  return parts.join("; ");
}
