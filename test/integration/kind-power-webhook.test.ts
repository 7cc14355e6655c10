// The kind power webhook on a real Docker Engine (skipped with the reason where none answers,
// failed on CI): it listens on the gateway of a docker network of its own (what the kind network's
// gateway is to kind's nodes), powers stand-in node containers labelled like a kind cluster's,
// and is driven by the controller's own webhook driver over HTTPS, verified with the service's CA.
import { expect } from "chai";
import { execa } from "execa";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kindNetworkGateway } from "../../lib/cluster/kind/network.js";
import { startKindPowerWebhook, type KindPowerWebhook } from "../../lib/cluster/kind/power-webhook/server.js";
import type { FenceTarget } from "../../lib/controller/drivers/types.js";
import { WebhookFenceDriver } from "../../lib/controller/drivers/webhook.js";
import type { Progress } from "../../lib/util/progress.js";
import { rekindleRejection } from "../support/assertions.js";
import { removeStandInNodes, startStandInNodes } from "../support/docker.js";
import { dockerMissing, requirePrerequisite } from "../support/prerequisites.js";

const CLUSTER = "rekindle-it-power";
/** Another "cluster" on the same engine, whose node the service must refuse. */
const OTHER = "rekindle-it-power-other";
const NETWORK = "rekindle-it-power-webhook";

async function running(container: string): Promise<boolean> {
  const { stdout } = await execa("docker", ["inspect", "--format", "{{.State.Running}}", container]);
  return stdout.trim() === "true";
}

async function removeNetwork(): Promise<void> {
  await execa("docker", ["network", "rm", NETWORK], { reject: false });
}

describe("kind power webhook (real Docker Engine, stand-in kind nodes)", function () {
  let started = false;
  let service: KindPowerWebhook | undefined;
  let gateway = "";
  let caDir = "";
  let caFile = "";
  const lines: string[] = [];
  const progress: Progress = {
    info(message) {
      lines.push(message);
    },
    phase() {
      return { update: () => undefined, end: () => 0 };
    },
  };

  before(async function () {
    requirePrerequisite(this, await dockerMissing());
    started = true;
    await removeStandInNodes(CLUSTER);
    await removeStandInNodes(OTHER);
    await removeNetwork();
    await execa("docker", ["network", "create", "--label", "rekindle.dev/run=test", NETWORK]);
    await startStandInNodes(CLUSTER, 2);
    await startStandInNodes(OTHER, 1);
    // The second node also joins the network, to reach the service from inside a container.
    await execa("docker", ["network", "connect", NETWORK, `${CLUSTER}-worker2`]);
    gateway = await kindNetworkGateway({ network: NETWORK });
    service = await startKindPowerWebhook({ cluster: CLUSTER, host: gateway, progress });
    caDir = mkdtempSync(join(tmpdir(), "rekindle-power-webhook-ca-"));
    caFile = join(caDir, "ca.crt");
    writeFileSync(caFile, service.caPem);
  });

  after(async function () {
    if (!started) return;
    await service?.close();
    await removeStandInNodes(CLUSTER);
    await removeStandInNodes(OTHER);
    await removeNetwork();
    if (caDir) rmSync(caDir, { recursive: true, force: true });
  });

  const target = (node: string, token = service?.token ?? ""): FenceTarget => ({
    node,
    options: { url: service?.url ?? "", caFile },
    credentials: { token },
  });

  it("finds the network's gateway as the engine reports it, and names a network that does not exist", async function () {
    const { stdout } = await execa("docker", [
      "network",
      "inspect",
      "--format",
      "{{range .IPAM.Config}}{{.Gateway}} {{end}}",
      NETWORK,
    ]);
    expect(stdout.trim().split(" ")).to.include(gateway);
    expect(service?.url).to.equal(`https://${gateway}:${new URL(service?.url ?? "").port}`);
    const missing = await rekindleRejection(kindNetworkGateway({ network: `${NETWORK}-absent` }));
    expect(missing.code).to.equal("NOT_FOUND");
    expect(missing.message).to.equal(`no docker network "${NETWORK}-absent" on the container engine`);
  });

  it("is reachable from a container on the network, at the gateway", async function () {
    // busybox's own TLS cannot talk to the service, so a TCP connection is the test: nc exits 0
    // once connected (the service then drops the line that is no TLS), 1 when refused.
    const port = new URL(service?.url ?? "").port;
    const probe = await execa(
      "docker",
      ["exec", `${CLUSTER}-worker2`, "/bin/sh", "-c", `echo | /bin/busybox nc -w 5 ${gateway} ${port}`],
      { reject: false, timeout: 30_000 },
    );
    expect(probe.exitCode, probe.stderr).to.equal(0);
  });

  it("powers a node container off and on through the controller's webhook driver", async function () {
    const driver = new WebhookFenceDriver();
    const node = `${CLUSTER}-worker`;
    expect(await driver.powerState(target(node))).to.equal("on");
    // Concurrent fences of one node (a retry racing the first call): one stop, all succeed.
    await Promise.all([
      driver.powerOff(target(node)),
      driver.powerOff(target(node)),
      driver.powerOff(target(node)),
    ]);
    expect(await running(node)).to.equal(false);
    expect(await driver.powerState(target(node))).to.equal("off");
    expect(await running(`${CLUSTER}-worker2`)).to.equal(true); // the other node untouched
    await driver.powerOn(target(node));
    expect(await running(node)).to.equal(true);
    expect(await driver.powerState(target(node))).to.equal("on");
    expect(lines.filter((l) => l.includes(`power-off ${node}: done`))).to.have.length(1);
    expect(lines.filter((l) => l.includes(`power-off ${node}: already off`))).to.have.length(2);
    expect(lines).to.include(`kind power webhook: power-on ${node}: done (was off)`);
  });

  it("refuses a wrong token and a node of another kind cluster, and touches neither", async function () {
    const driver = new WebhookFenceDriver();
    const refused = await rekindleRejection(driver.powerOff(target(`${CLUSTER}-worker`, "wrong-token")));
    expect(refused.message).to.include("answered 401");
    expect(await running(`${CLUSTER}-worker`)).to.equal(true);
    const foreign = await rekindleRejection(driver.powerOff(target(`${OTHER}-worker`)));
    expect(foreign.message).to.include("answered 404");
    expect(await running(`${OTHER}-worker`)).to.equal(true);
  });

  it("stops listening on close", async function () {
    const port = new URL(service?.url ?? "").port;
    await service?.close();
    const probe = await execa(
      "docker",
      ["exec", `${CLUSTER}-worker2`, "/bin/sh", "-c", `echo | /bin/busybox nc -w 5 ${gateway} ${port}`],
      { reject: false, timeout: 30_000 },
    );
    expect(probe.exitCode).to.equal(1);
    expect(probe.stderr).to.include("refused");
  });
});
