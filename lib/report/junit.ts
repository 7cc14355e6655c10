// junit.xml: one testcase per scenario, failures with the mismatch table. A harness that broke
// (summary.json's `error`) is one more testcase with an <error>, not a <failure>: CI shows "the
// harness broke", not "the system under test failed".
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RunSummary } from "./summary.js";

function escapeXml(text: string): string {
  return text.replace(
    /[<>&"']/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c] ?? c,
  );
}

/** The testcase that stands for the harness itself when it broke. */
export const HARNESS_CASE = "rekindle/harness";

export function junitXml(summary: RunSummary): string {
  const failures = summary.scenarios.filter((s) => s.outcome === "failed").length;
  const cases = summary.scenarios.map((s) => {
    const seconds = ((s.recoveryMs ?? 0) / 1000).toFixed(3);
    const body =
      s.outcome === "failed"
        ? `\n      <failure message="${escapeXml((s.error ?? "failed").split("\n")[0] ?? "failed")}">${escapeXml(s.error ?? "")}</failure>\n    `
        : "";
    return `    <testcase classname="rekindle.${escapeXml(summary.provider)}.${escapeXml(summary.profile)}" name="${escapeXml(s.id)}" time="${seconds}">${body}</testcase>`;
  });
  const skipped = summary.skipped ?? [];
  for (const s of skipped) {
    cases.push(
      `    <testcase classname="rekindle.${escapeXml(summary.provider)}.${escapeXml(summary.profile)}" name="${escapeXml(s.id)}" time="0">\n      <skipped message="${escapeXml(s.reason)}"/>\n    </testcase>`,
    );
  }
  const broke = summary.error ?? undefined;
  if (broke !== undefined) {
    const message = `${broke.code} during ${broke.phase}: ${broke.message}`;
    cases.push(
      `    <testcase classname="rekindle.${escapeXml(summary.provider)}.${escapeXml(summary.profile)}" name="${HARNESS_CASE}" time="0">\n      <error type="${escapeXml(broke.code)}" message="${escapeXml(message.split("\n")[0] ?? message)}">${escapeXml(broke.hint === undefined ? message : `${message}\nhint: ${broke.hint}`)}</error>\n    </testcase>`,
    );
  }
  const errors = broke === undefined ? 0 : 1;
  const tests = summary.scenarios.length + skipped.length + errors;
  const counts = `tests="${tests}" failures="${failures}" errors="${errors}" skipped="${skipped.length}"`;
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="rekindle" ${counts}>`,
    `  <testsuite name="rekindle ${escapeXml(summary.runId)}" ${counts} timestamp="${escapeXml(summary.startedAt)}">`,
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
