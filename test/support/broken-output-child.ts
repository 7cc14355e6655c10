// Test helper process: long work whose reader goes away. Installs the broken-output handling and an
// interrupt scope, writes a line to <stream> every 20 ms until interrupted, then "undoes" its work by
// writing <marker> and settles on exit code 7.
import { writeFileSync } from "node:fs";
import { interruptOnBrokenOutput } from "../../lib/util/broken-output.js";
import { interruptScope } from "../../lib/util/cleanup.js";

const [stream, marker] = process.argv.slice(2);
if ((stream !== "stdout" && stream !== "stderr") || marker === undefined)
  throw new Error("usage: broken-output-child stdout|stderr <marker file>");
interruptOnBrokenOutput();
using scope = interruptScope("test work");
const out = stream === "stdout" ? process.stdout : process.stderr;
await new Promise<void>((resolve) => {
  const writing = setInterval(() => out.write("working\n"), 20);
  scope.signal.addEventListener("abort", () => {
    clearInterval(writing);
    resolve();
  });
});
writeFileSync(marker, "undone");
scope.settle(7);
