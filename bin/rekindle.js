#!/usr/bin/env node
// Entry point: runs the compiled CLI (built by `npm install` via the prepare script, or `npm run build`).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const compiled = new URL("../dist/lib/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(compiled))) {
  console.error(
    "rekindle: dist/ is missing; run `npm install` (or `npm run build`) in the rekindle checkout first.",
  );
  process.exit(2);
}
// `rekindle list | head` closes stdout early, a killed log reader closes both: not errors, but an
// interrupt (work under way is undone first); see lib/util/broken-output.ts.
const { interruptOnBrokenOutput } = await import(
  new URL("../dist/lib/util/broken-output.js", import.meta.url).href
);
interruptOnBrokenOutput();
// A command whose work stalls with nothing left to wait for would otherwise exit quietly with 0.
let settled = false;
process.on("beforeExit", () => {
  if (settled) return;
  console.error("rekindle: internal error: the command stopped before finishing (a promise never settled)");
  process.exitCode = 70;
});
const { main } = await import(compiled.href);
process.exitCode = await main(process.argv.slice(2));
settled = true;
