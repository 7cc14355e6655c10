// junit.xml: one testcase per scenario, failures with the missed budgets and the mismatch table
// (or what a step threw). A harness that broke (summary.json's `error`) is one more testcase with
// an <error>, not a <failure>: CI shows "the harness broke", not "the system under test failed".
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { missedBudgetLine } from "../expect/budgets.js";
import { missedBudgets, summaryBudgetLine } from "./summary-budgets.js";
import type { RunSummary, ScenarioSummary } from "./summary-types.js";
import { escapeMarkup } from "../util/markup.js";

/** The testcase that stands for the harness itself when it broke. */
export const HARNESS_CASE = "rekindle/harness";

/**
 * A failed scenario's failure text: its error, then each budget it missed that the error does not
 * already say (a run whose step failed, or missed budgets only in other runs than the first failed one).
 */
export function failureText(scenario: ScenarioSummary): string {
  const error = scenario.error ?? "";
  const missed = missedBudgets(scenario)
    .filter((b) => !error.includes(missedBudgetLine(b)))
    .map((b) => summaryBudgetLine(b, scenario.runs.length));
  return [error, missed.join("\n")].filter((part) => part !== "").join("\n\n");
}

export function junitXml(summary: RunSummary): string {
  const failures = summary.scenarios.filter((s) => s.outcome === "failed").length;
  const cases = summary.scenarios.map((s) => {
    const seconds = ((s.recoveryMs ?? 0) / 1000).toFixed(3);
    const text = failureText(s);
    const body =
      s.outcome === "failed"
        ? `\n      <failure message="${escapeMarkup(text === "" ? "failed" : (text.split("\n")[0] ?? ""))}">${escapeMarkup(text)}</failure>\n    `
        : "";
    return `    <testcase classname="rekindle.${escapeMarkup(summary.provider)}.${escapeMarkup(summary.profile)}" name="${escapeMarkup(s.id)}" time="${seconds}">${body}</testcase>`;
  });
  const skipped = summary.skipped ?? [];
  for (const s of skipped) {
    cases.push(
      `    <testcase classname="rekindle.${escapeMarkup(summary.provider)}.${escapeMarkup(summary.profile)}" name="${escapeMarkup(s.id)}" time="0">\n      <skipped message="${escapeMarkup(s.reason)}"/>\n    </testcase>`,
    );
  }
  const broke = summary.error ?? undefined;
  if (broke !== undefined) {
    const message = `${broke.code} during ${broke.phase}: ${broke.message}`;
    cases.push(
      `    <testcase classname="rekindle.${escapeMarkup(summary.provider)}.${escapeMarkup(summary.profile)}" name="${HARNESS_CASE}" time="0">\n      <error type="${escapeMarkup(broke.code)}" message="${escapeMarkup(message.split("\n")[0] ?? message)}">${escapeMarkup(broke.hint === undefined ? message : `${message}\nhint: ${broke.hint}`)}</error>\n    </testcase>`,
    );
  }
  const errors = broke === undefined ? 0 : 1;
  const tests = summary.scenarios.length + skipped.length + errors;
  const counts = `tests="${tests}" failures="${failures}" errors="${errors}" skipped="${skipped.length}"`;
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="rekindle" ${counts}>`,
    `  <testsuite name="rekindle ${escapeMarkup(summary.runId)}" ${counts} timestamp="${escapeMarkup(summary.startedAt)}">`,
    ...cases,
    `  </testsuite>`,
    `</testsuites>`,
    ``,
  ].join("\n");
}

export function writeJunit(dir: string, summary: RunSummary): string {
  const path = join(dir, "junit.xml");
  writeFileSync(path, junitXml(summary));
  return path;
}
