// rekindle's build info: package version, and the commit and dirtiness only of rekindle's own checkout.
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildInfoOf, rekindleBuildInfo } from "../../lib/util/build-info.js";

function git(dir: string, ...args: string[]): string {
  return execFileSync(
    "git",
    [
      "-C",
      dir,
      "-c",
      "user.name=t",
      "-c",
      "user.email=t@example.invalid",
      "-c",
      "commit.gpgsign=false",
      ...args,
    ],
    { encoding: "utf8" },
  ).trim();
}

describe("build info", function () {
  this.timeout(20_000);
  let dir: string;

  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), "rekindle-build-info-"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "rekindle", version: "9.8.7" }));
  });

  afterEach(function () {
    rmSync(dir, { recursive: true, force: true });
  });

  it("outside a git checkout: the package version, sha unknown, dirtiness unknown", async function () {
    expect(await buildInfoOf(dir)).to.deep.equal({ version: "9.8.7", gitSha: "unknown", dirty: null });
  });

  it("in a checkout: HEAD's sha, dirty once a tracked file changes (not for an untracked one)", async function () {
    git(dir, "init", "-q");
    git(dir, "add", "package.json");
    git(dir, "commit", "-q", "-m", "first");
    const head = git(dir, "rev-parse", "HEAD");
    expect(await buildInfoOf(dir)).to.deep.equal({ version: "9.8.7", gitSha: head, dirty: false });
    writeFileSync(join(dir, "untracked.txt"), "x");
    expect((await buildInfoOf(dir)).dirty).to.equal(false);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "rekindle", version: "9.8.8" }));
    expect(await buildInfoOf(dir)).to.deep.equal({ version: "9.8.8", gitSha: head, dirty: true });
  });

  it("installed inside another repository (node_modules/rekindle): not that repository's commit", async function () {
    git(dir, "init", "-q");
    git(dir, "add", "package.json");
    git(dir, "commit", "-q", "-m", "someone else's project");
    const installed = join(dir, "node_modules", "rekindle");
    mkdirSync(installed, { recursive: true });
    writeFileSync(join(installed, "package.json"), JSON.stringify({ version: "1.2.3" }));
    expect(await buildInfoOf(installed)).to.deep.equal({ version: "1.2.3", gitSha: "unknown", dirty: null });
  });

  it("this checkout's info is asked once and shared", async function () {
    const a = rekindleBuildInfo();
    expect(rekindleBuildInfo()).to.equal(a);
    expect((await a).gitSha).to.match(/^[0-9a-f]{40}$/);
  });
});
