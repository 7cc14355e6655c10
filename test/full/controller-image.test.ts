// The in-cluster controller image as `rekindle kind build-controller-image` makes it (offline: a base
// from Debian packages and this machine's Node.js, npm from a cache, no network in the build), run
// the way deploy/controller/deployment.yaml runs it: read-only, uid 1000, no capabilities, no
// privilege escalation, a 16 MiB /tmp. Built once per engine and inputs; reused after.
import { expect } from "chai";
import { execa } from "execa";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ensureControllerImage, planControllerImage } from "../../lib/cluster/kind/image/controller-image.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { findOnPath } from "../../lib/util/paths.js";
import { consoleProgress } from "../../lib/util/progress.js";
import { securityContextRunArgs } from "../support/controller-securitycontext.js";
import { engineMissing, HINT, requirePrerequisite } from "../support/prerequisites.js";

/** Why the image can neither be reused nor built here, or undefined. */
async function imageMissing(): Promise<string | undefined> {
  const engine = await engineMissing();
  if (engine !== undefined) return engine;
  const { nodeImage } = await planControllerImage();
  const base = await execa("docker", ["image", "inspect", nodeImage], { reject: false });
  if (base.exitCode === 0) return undefined;
  if (process.getuid?.() !== 0) return `making the Node.js base image ${nodeImage} needs root; ${HINT}`;
  if (findOnPath("mmdebstrap") === undefined) return `no mmdebstrap (Debian package); ${HINT}`;
  return undefined;
}

describe("controller image built offline, run under the Deployment's securityContext", function () {
  let tag: string;
  let runArgs: string[];

  before(async function () {
    // Cold: a Debian root filesystem, npm's cache and the docker build (minutes); seconds after.
    this.timeout(30 * 60_000);
    requirePrerequisite(this, await imageMissing());
    tag = (await ensureControllerImage({ progress: consoleProgress() })).tag;
    runArgs = securityContextRunArgs(
      readFileSync(join(PROJECT_ROOT, "deploy", "controller", "deployment.yaml"), "utf8"),
    );
  });

  async function run(args: string[]) {
    return execa("docker", ["run", "--rm", ...runArgs, tag, ...args], { reject: false, timeout: 120_000 });
  }

  it("rekindle --help answers with the usage", async function () {
    const result = await run(["--help"]);
    expect(result.exitCode, result.stderr).to.equal(0);
    expect(result.stdout).to.include("usage: rekindle <command>");
  });

  it("rekindle controller --help answers with the controller's usage", async function () {
    const result = await run(["controller", "--help"]);
    expect(result.exitCode, result.stderr).to.equal(0);
    expect(result.stdout).to.include("rekindle controller [--kubeconfig K]");
  });

  it("the controller loads and reaches its configuration check (no cluster here)", async function () {
    // It must fail on its input, as it would in a pod without the ConfigMap, not on the image
    // (a module missing from the production dependencies, a write to the read-only root).
    const result = await run(["controller", "--fence-config", "/nonexistent/fence.yaml"]);
    expect(result.exitCode, result.stderr).to.equal(2);
    expect(result.stderr).to.include("cannot read fence configuration /nonexistent/fence.yaml");
  });

  it("holds the packages the controller loads, none of testcontainers, mocha or allure", async function () {
    const result = await execa("docker", ["run", "--rm", "--entrypoint", "ls", tag, "/app/node_modules"], {
      timeout: 120_000,
    });
    const packages = result.stdout.split("\n");
    expect(packages).to.include.members(["@kubernetes", "execa", "p-retry", "yaml"]);
    for (const absent of [
      "testcontainers",
      "dockerode",
      "mocha",
      "allure-mocha",
      "allure-js-commons",
      "typescript",
      "@eslint",
      "@esbuild",
    ]) {
      expect(packages).to.not.include(absent);
    }
  });

  it("refuses at start a fence-agent template whose agent the image lacks, and a docker one", async function () {
    // The configuration is written to the container's own /tmp (its root is read-only).
    const fenceConfig = [
      "templates:",
      "  bmc: { driver: fence-agent, options: { agent: fence_redfish, ip: 10.0.0.1 } }",
      "  kind: { driver: docker }",
      "nodes: { worker: kind }",
      "defaultTemplate: bmc",
      "",
    ].join("\n");
    const result = await execa(
      "docker",
      [
        "run",
        "--rm",
        ...runArgs,
        "--entrypoint",
        "sh",
        tag,
        "-c",
        'printf "%s" "$0" > /tmp/fence.yaml && exec node /app/bin/rekindle.js controller --fence-config /tmp/fence.yaml',
        fenceConfig,
      ],
      { reject: false, timeout: 120_000 },
    );
    expect(result.exitCode, result.stderr).to.equal(2);
    expect(result.stderr).to.include("templates.bmc: fence agent fence_redfish is not installed");
    expect(result.stderr).to.include("/usr/sbin, /usr/bin");
    expect(result.stderr).to.include("templates.kind: the docker driver needs the testcontainers package");
  });

  it("every file under /app is readable by the uid it runs as", async function () {
    const result = await execa(
      "docker",
      [
        "run",
        "--rm",
        "--entrypoint",
        "find",
        tag,
        "/app",
        "(",
        "!",
        "-perm",
        "-o+r",
        "-o",
        "-type",
        "d",
        "!",
        "-perm",
        "-o+x",
        ")",
        "-print",
      ],
      { timeout: 120_000 },
    );
    expect(result.stdout.trim()).to.equal("");
  });

  it("is not rebuilt when nothing changed", async function () {
    const again = await ensureControllerImage();
    expect(again.built).to.equal(false);
    expect(again.tag).to.equal(tag);
  });
});
