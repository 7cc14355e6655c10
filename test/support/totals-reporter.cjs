// Mocha's spec reporter plus one plain closing line, "<suite>: N passed, N failed", that CI systems
// read without knowing mocha's wording. Pending (skipped) tests are counted too, and each reason a
// missing prerequisite gave (test/support/prerequisites.ts) follows on a line of its own.
// Each test file's wall time (its hooks and tests) is written to
// reports/test-durations/<label>.json, and the slowest files are printed before the closing line,
// so a slow gate shows where its time goes.
"use strict";
const Mocha = require("mocha");
const { mkdirSync, writeFileSync } = require("node:fs");
const { join, relative } = require("node:path");

/** Files listed before the closing line, slowest first. */
const SLOWEST_SHOWN = 10;

/** The file a suite's tests come from (mocha sets it on each file's top-level suites). */
function fileOf(suite) {
  for (let s = suite; s; s = s.parent) if (s.file) return s.file;
  return undefined;
}

class SpecWithTotals extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const label = (options.reporterOptions && options.reporterOptions.label) || "tests";
    const started = Date.now();
    /** file → { startedAt, endedAt, passed, failed, skipped } */
    const files = new Map();
    const entry = (file) => {
      let e = files.get(file);
      if (!e) {
        e = { startedAt: Date.now(), endedAt: Date.now(), passed: 0, failed: 0, skipped: 0 };
        files.set(file, e);
      }
      return e;
    };
    runner.on(Mocha.Runner.constants.EVENT_SUITE_BEGIN, (suite) => {
      const file = fileOf(suite);
      if (file) entry(file);
    });
    runner.on(Mocha.Runner.constants.EVENT_SUITE_END, (suite) => {
      const file = fileOf(suite);
      if (file) entry(file).endedAt = Date.now();
    });
    const count = (key) => (test) => {
      const file = fileOf(test.parent) || test.file;
      if (file) entry(file)[key] += 1;
    };
    runner.on(Mocha.Runner.constants.EVENT_TEST_PASS, count("passed"));
    runner.on(Mocha.Runner.constants.EVENT_TEST_FAIL, count("failed"));
    runner.on(Mocha.Runner.constants.EVENT_TEST_PENDING, count("skipped"));
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const { passes, failures, pending } = runner.stats;
      const rows = [...files]
        .map(([file, e]) => ({
          file: relative(process.cwd(), file),
          ms: e.endedAt - e.startedAt,
          passed: e.passed,
          failed: e.failed,
          skipped: e.skipped,
        }))
        .sort((a, b) => b.ms - a.ms);
      writeDurations(label, started, rows);
      if (rows.length > 1) {
        process.stdout.write(`\n${label}: the slowest files\n`);
        for (const row of rows.slice(0, SLOWEST_SHOWN))
          process.stdout.write(`  ${(row.ms / 1000).toFixed(1).padStart(7)} s  ${row.file}\n`);
      }
      process.stdout.write(
        `\n${label}: ${passes} passed, ${failures} failed${pending ? `, ${pending} skipped` : ""}\n`,
      );
      for (const reason of globalThis.rekindleSkipReasons || [])
        process.stdout.write(`  skipped ${reason}\n`);
    });
  }
}

/** reports/test-durations/<label>.json: the layer's wall time and each file's, slowest first. */
function writeDurations(label, started, rows) {
  try {
    const dir = join(process.cwd(), "reports", "test-durations");
    mkdirSync(dir, { recursive: true });
    const body = {
      label,
      startedAt: new Date(started).toISOString(),
      totalMs: Date.now() - started,
      files: rows,
    };
    writeFileSync(join(dir, `${label}.json`), `${JSON.stringify(body, null, 2)}\n`);
  } catch (error) {
    // A report that cannot be written must not fail the tests it reports on.
    process.stderr.write(`test durations not written: ${error.message}\n`);
  }
}

module.exports = SpecWithTotals;
