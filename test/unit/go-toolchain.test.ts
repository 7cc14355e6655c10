import { expect } from "chai";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RekindleError } from "../../lib/errors.js";
import { findGoToolchain, goVersionAtLeast, parseGoVersion } from "../../lib/build/go-toolchain.js";

function fakeGo(output: string): string {
  const dir = mkdtempSync(join(tmpdir(), "rekindle-fake-go-"));
  const path = join(dir, "go");
  writeFileSync(path, `#!/bin/sh\necho "${output}"\n`);
  chmodSync(path, 0o755);
  return path;
}

describe("Go toolchain detection", function () {
  it("parses release, rc and short version strings", function () {
    expect(parseGoVersion("go1.26.8")).to.deep.equal([1, 26, 8]);
    expect(parseGoVersion("go1.27rc1")).to.deep.equal([1, 27, 0]);
    expect(parseGoVersion("1.24")).to.deep.equal([1, 24, 0]);
    expect(parseGoVersion("devel go1.27-abc")).to.equal(undefined);
  });

  it("compares versions numerically, not as text", function () {
    expect(goVersionAtLeast("1.26.10", "1.26.9")).to.equal(true);
    expect(goVersionAtLeast("1.9.0", "1.26.0")).to.equal(false);
    expect(goVersionAtLeast("1.26.0", "1.26.0")).to.equal(true);
    expect(goVersionAtLeast("2.0.0", "1.26.0")).to.equal(true);
  });

  it("accepts the machine's Go", async function () {
    const go = await findGoToolchain();
    expect(goVersionAtLeast(go.version, "1.26.0")).to.equal(true);
  });

  it("rejects a Go that is too old, naming the version needed", async function () {
    const error = await findGoToolchain({ goBinary: fakeGo("go1.22.1") }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(RekindleError);
    const rekindleError = error as RekindleError;
    expect(rekindleError.code).to.equal("TOOLCHAIN");
    expect(rekindleError.message).to.match(/Go 1\.22\.1 .* too old.*>= 1\.26\.0/);
    expect(rekindleError.hint).to.include("REKINDLE_GO");
  });

  it("reports a missing go binary clearly", async function () {
    const error = (await findGoToolchain({ goBinary: "/nonexistent/bin/go" }).catch(
      (e: unknown) => e,
    )) as RekindleError;
    expect(error.code).to.equal("TOOLCHAIN");
    expect(error.message).to.include("/nonexistent/bin/go");
    expect(error.hint).to.match(/Go >= 1\.26\.0/);
  });

  it("rejects output that is not a Go version", async function () {
    const error = (await findGoToolchain({ goBinary: fakeGo("banana") }).catch(
      (e: unknown) => e,
    )) as RekindleError;
    expect(error.code).to.equal("TOOLCHAIN");
    expect(error.message).to.include("banana");
  });
});
