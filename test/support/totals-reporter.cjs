// Mocha's spec reporter plus one plain closing line, "<suite>: N passed, N failed", that CI systems
// read without knowing mocha's wording. Pending (skipped) tests are counted too, and each reason a
// missing prerequisite gave (test/support/prerequisites.ts) follows on a line of its own.
"use strict";
const Mocha = require("mocha");

class SpecWithTotals extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const label = (options.reporterOptions && options.reporterOptions.label) || "tests";
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const { passes, failures, pending } = runner.stats;
      process.stdout.write(
        `\n${label}: ${passes} passed, ${failures} failed${pending ? `, ${pending} skipped` : ""}\n`,
      );
      for (const reason of globalThis.rekindleSkipReasons || [])
        process.stdout.write(`  skipped ${reason}\n`);
    });
  }
}

module.exports = SpecWithTotals;
