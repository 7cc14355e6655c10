// `npm run test:integration`, part of the gate (`npm test`): real control planes, the sim families
// at the fast profile, real engines and agents, and one real-kind smoke run.
"use strict";
module.exports = require("./test/support/mocha-config.cjs")({
  label: "integration",
  spec: ["test/integration/**/*.test.ts"],
  timeout: 600_000,
  slow: 60_000,
});
