// The mocha settings every test layer shares (.mocharc.*.cjs): TypeScript through tsx, the totals
// reporter, and no focused or pending test unless REKINDLE_ALLOW_SKIP=1 says skips are wanted
// (then a test whose prerequisite is missing skips and says why: test/support/prerequisites.ts).
// REKINDLE_TEST_FILES (paths, space-separated) replaces the layer's files and REKINDLE_TEST_LABEL
// its label: mocha adds a `--spec` given on its command line to the config's, never replaces it.
"use strict";

/** @param {{ label: string, spec: string[], timeout: number, slow?: number, require?: string[] }} layer */
module.exports = function mochaConfig(layer) {
  const allowSkip = process.env.REKINDLE_ALLOW_SKIP === "1";
  const files = (process.env.REKINDLE_TEST_FILES || "").split(" ").filter((f) => f !== "");
  const label = process.env.REKINDLE_TEST_LABEL || layer.label;
  return {
    "node-option": ["import=tsx"],
    spec: files.length > 0 ? files : layer.spec,
    extension: ["ts"],
    timeout: layer.timeout,
    ...(layer.slow === undefined ? {} : { slow: layer.slow }),
    ...(layer.require === undefined ? {} : { require: layer.require }),
    "forbid-only": true,
    "forbid-pending": !allowSkip,
    bail: false,
    reporter: "./test/support/totals-reporter.cjs",
    "reporter-option": [`label=${label}`],
  };
};
