// `npm run test:unit`: logic with a fake clock or API, no processes, seconds in all.
"use strict";
module.exports = require("./test/support/mocha-config.cjs")({
  label: "unit",
  spec: ["test/unit/**/*.test.ts"],
  timeout: 10_000,
  require: ["./test/support/unit-tmpdir.ts"],
});
