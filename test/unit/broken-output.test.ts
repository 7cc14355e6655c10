// A process whose output reader goes away (EPIPE) is interrupted, undoes its work and exits with its
// own code, instead of dying mid-write with what it started left running; other stream errors are
// not swallowed.
import { expect } from "chai";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { interruptOnBrokenOutput } from "../../lib/util/broken-output.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";

function runChild(stream: "stdout" | "stderr"): Promise<{ code: number | null; marker: string }> {
  const marker = join(mkdtempSync(join(tmpdir(), "rekindle-broken-output-")), "undone");
  const script = join(PROJECT_ROOT, "test", "support", "broken-output-child.ts");
  const child = spawn(process.execPath, ["--import", "tsx", script, stream, marker], {
    cwd: PROJECT_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const reader = stream === "stdout" ? child.stdout : child.stderr;
  // Once the work is under way, the reader goes away.
  reader.once("data", () => {
    reader.destroy();
  });
  return new Promise((resolve) => {
    child.on("close", (code) => {
      resolve({ code, marker });
    });
  });
}

describe("broken output", function () {
  this.timeout(30_000);

  for (const stream of ["stdout", "stderr"] as const)
    it(`interrupts the work when ${stream}'s reader goes: undone, and the work's own exit code`, async () => {
      const { code, marker } = await runChild(stream);
      expect(existsSync(marker), "the work's undo ran").to.equal(true);
      expect(readFileSync(marker, "utf8")).to.equal("undone");
      expect(code).to.equal(7);
    });

  it("interrupts once for both streams, and rethrows any other stream error", () => {
    const streams = [new PassThrough(), new PassThrough()] as unknown as NodeJS.WriteStream[];
    let interrupts = 0;
    interruptOnBrokenOutput(streams, () => interrupts++);
    const epipe = Object.assign(new Error("write EPIPE"), { code: "EPIPE" });
    streams[0]?.emit("error", epipe);
    streams[0]?.emit("error", new Error("write after destroy"));
    streams[1]?.emit("error", epipe);
    expect(interrupts).to.equal(1);
    const other = new PassThrough() as unknown as NodeJS.WriteStream;
    interruptOnBrokenOutput([other], () => interrupts++);
    expect(() => other.emit("error", Object.assign(new Error("disk full"), { code: "ENOSPC" }))).to.throw(
      "disk full",
    );
  });
});
