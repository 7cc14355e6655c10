// junit.xml: one testcase per scenario, failures with the mismatch table.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RunSummary } from "./summary.js";

function escapeXml(text: string): string {
  return text.replace(
    /[<>&"']/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c] ?? c,
  );
}

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
  const tests = summary.scenarios.length + skipped.length;
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="rekindle" tests="${tests}" failures="${failures}" skipped="${skipped.length}">`,
    `  <testsuite name="rekindle ${escapeXml(summary.runId)}" tests="${tests}" failures="${failures}" skipped="${skipped.length}" timestamp="${escapeXml(summary.startedAt)}">`,
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
