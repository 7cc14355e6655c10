// An install without devDependencies runs rekindle: a copy of the checkout (the files git tracks or
// would track, as they are now), `npm ci --omit=dev` in it (compiling dist/ on install, from npm's
// cache when it holds the packages), then the CLI. About 20 s on 2 cores with a warm npm cache.
import { expect } from "chai";
import { execa } from "execa";
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";

/** Copies the checkout's tracked and untracked-but-not-ignored files (no node_modules, dist, reports). */
async function copyCheckout(to: string): Promise<void> {
  const { stdout } = await execa("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: PROJECT_ROOT,
  });
  // Never node_modules, even one git does not ignore (a symlink to another checkout's): npm ci in
  // the copy would empty the directory it points to.
  const skipped = (file: string) =>
    file === "" || file === "node_modules" || file.startsWith("node_modules/");
  for (const file of stdout.split("\0").filter((f) => !skipped(f))) {
    const source = join(PROJECT_ROOT, file);
    // A file deleted in the working tree but still in the index.
    if (!existsSync(source)) continue;
    mkdirSync(dirname(join(to, file)), { recursive: true });
    cpSync(source, join(to, file), { verbatimSymlinks: true });
  }
}

describe("packaging: npm ci --omit=dev, then rekindle", function () {
  this.timeout(180_000);
  let dir: string;

  const rekindle = (...args: string[]) => execa("npx", ["rekindle", ...args], { cwd: dir, reject: false });

  before(async function () {
    dir = mkdtempSync(join(tmpdir(), "rekindle-omit-dev-"));
    await copyCheckout(dir);
    await execa("npm", ["ci", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: dir });
  });

  after(function () {
    rmSync(dir, { recursive: true, force: true });
  });

  it("installs no devDependency and compiles dist/ on install", function () {
    for (const dev of ["chai", "tsx", "eslint", "prettier", "@types/mocha"]) {
      expect(existsSync(join(dir, "node_modules", dev)), `node_modules/${dev}`).to.equal(false);
    }
    expect(existsSync(join(dir, "dist", "lib", "cli", "main.js"))).to.equal(true);
  });

  it("answers `rekindle --help` and `rekindle help` with the usage, exit 0", async function () {
    for (const args of [["--help"], ["help"]]) {
      const result = await rekindle(...args);
      expect(result.exitCode, `rekindle ${args.join(" ")}: ${result.stderr}`).to.equal(0);
      expect(result.stdout).to.include("usage: rekindle");
      expect(result.stdout).to.not.include("not available in this installation");
    }
  });

  it("loads every command's modules (the run command's mocha and allure among them)", async function () {
    const commands = ["run-commands", "sim-commands", "controller-command", "kind-commands"];
    const script = commands.map((c) => `await import("./dist/lib/cli/${c}.js");`).join("\n");
    const result = await execa("node", ["--input-type=module", "-e", script], { cwd: dir, reject: false });
    expect(result.exitCode, result.stderr).to.equal(0);
    const list = await rekindle("list");
    expect(list.exitCode, list.stderr).to.equal(0);
    expect(list.stdout).to.include("node-loss/");
  });

  it("answers `rekindle run --help` with the run command's usage, exit 0", async function () {
    const result = await rekindle("run", "--help");
    expect(result.exitCode, result.stderr).to.equal(0);
    expect(result.stdout).to.include("rekindle run");
  });
});
