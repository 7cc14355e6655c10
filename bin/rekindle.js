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
// `rekindle list | head` closes stdout early: that is not an error.
process.stdout.on("error", (error) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});
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
