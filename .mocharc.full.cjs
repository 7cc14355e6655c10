// `npm run test:slow`, the part `npm run test:full` adds to the gate: every kind family, the
// by-hand 6-minute scenarios, every family at the default profile, the controller image build.
"use strict";
module.exports = require("./test/support/mocha-config.cjs")({
  label: "full",
  spec: ["test/full/**/*.test.ts"],
  timeout: 600_000,
  slow: 300_000,
});
