// A fence-agent template whose agent program is not installed is refused when the controller starts
// (exit 2, naming the template, the agent and where it looked), not found missing at the first node
// loss; one whose agent is installed is accepted.
import { expect } from "chai";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../../lib/cli/main.js";
import { FenceAgentDriver, findAgent } from "../../lib/controller/drivers/fence-agent.js";
import { fenceDriverRegistry } from "../../lib/controller/drivers/registry.js";
import { parseFenceConfig } from "../../lib/controller/fence-config-parse.js";
import { captureStderr, rekindleThrow } from "../support/assertions.js";

/** A directory holding an executable fence_stand_in and a fence_not_executable that is not. */
function agentDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "rekindle-agents-"));
  writeFileSync(join(dir, "fence_stand_in"), "#!/bin/sh\nexit 0\n");
  chmodSync(join(dir, "fence_stand_in"), 0o755);
  writeFileSync(join(dir, "fence_not_executable"), "#!/bin/sh\nexit 0\n");
  chmodSync(join(dir, "fence_not_executable"), 0o644);
  return dir;
}

function configWith(agent: string) {
  return {
    templates: { ipmi: { driver: "fence-agent", options: { agent, ip: "{{node}}-bmc" } } },
    defaultTemplate: "ipmi",
  };
}

describe("fence agents: a template's agent must be installed at start", function () {
  const dir = agentDir();
  const searchPath = `${dir}:${join(dir, "no-such-dir")}`;
  const drivers = fenceDriverRegistry([new FenceAgentDriver(searchPath)]);

  it("finds an executable agent in the search path, and nothing else", function () {
    expect(findAgent("fence_stand_in", searchPath)).to.equal(join(dir, "fence_stand_in"));
    expect(findAgent("fence_not_executable", searchPath)).to.equal(undefined);
    expect(findAgent("fence_doesnotexist", searchPath)).to.equal(undefined);
    expect(findAgent("fence_stand_in", "")).to.equal(undefined);
  });

  it("accepts a template whose agent is installed", function () {
    const config = parseFenceConfig(configWith("fence_stand_in"), drivers, "fence.yaml");
    expect(config.templates["ipmi"]?.options?.["agent"]).to.equal("fence_stand_in");
  });

  it("refuses a missing agent naming the template, the agent and every directory it looked in", function () {
    const error = rekindleThrow(() =>
      parseFenceConfig(configWith("fence_doesnotexist"), drivers, "fence.yaml"),
    );
    expect(error.code).to.equal("INVALID_INPUT");
    expect(error.message).to.include("templates.ipmi");
    expect(error.message).to.include("fence agent fence_doesnotexist is not installed");
    expect(error.message).to.include(`${dir}, ${join(dir, "no-such-dir")}`);
  });

  it("refuses an agent file that is not executable", function () {
    const error = rekindleThrow(() =>
      parseFenceConfig(configWith("fence_not_executable"), drivers, "fence.yaml"),
    );
    expect(error.message).to.include("fence agent fence_not_executable is not installed");
  });

  it("looks in /usr/sbin by default, where Debian's fence-agents installs fence_redfish", function () {
    const installed = findAgent("fence_redfish", "/usr/sbin") !== undefined;
    const defaults = fenceDriverRegistry([new FenceAgentDriver()]);
    const run = () => parseFenceConfig(configWith("fence_redfish"), defaults, "fence.yaml");
    // This machine's packages decide which answer is right; both are checked against it.
    if (installed) expect(run().templates["ipmi"]?.options?.["agent"]).to.equal("fence_redfish");
    else expect(rekindleThrow(run).message).to.include("/usr/sbin, /usr/bin");
  });

  it("`rekindle controller` exits 2 before reaching the cluster, naming template and agent", async function () {
    const work = mkdtempSync(join(tmpdir(), "rekindle-agent-start-"));
    const fenceConfig = join(work, "fence.yaml");
    writeFileSync(
      fenceConfig,
      "templates:\n  ipmi: { driver: fence-agent, options: { agent: fence_doesnotexist, ip: 10.0.0.1 } }\ndefaultTemplate: ipmi\n",
    );
    // A cluster nobody serves: the refusal must come before any request to it.
    const kubeconfig = join(work, "kubeconfig");
    writeFileSync(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters: [{ name: c, cluster: { server: 'https://127.0.0.1:9' } }]",
        "users: [{ name: u, user: { token: t } }]",
        "contexts: [{ name: x, context: { cluster: c, user: u } }]",
        "current-context: x",
        "",
      ].join("\n"),
    );
    const { value, stderr } = await captureStderr(() =>
      main(["controller", "--fence-config", fenceConfig, "--kubeconfig", kubeconfig]),
    );
    expect(value).to.equal(2);
    expect(stderr).to.include("templates.ipmi");
    expect(stderr).to.include("fence_doesnotexist is not installed");
    expect(stderr).to.include("/usr/sbin");
    expect(stderr).to.not.match(/ECONNREFUSED|127\.0\.0\.1:9/);
  });
});
