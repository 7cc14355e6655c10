// The kind power webhook over HTTPS, driven by the controller's own WebhookFenceDriver, its BMC
// lies included (lib/cluster/bmc-lies.ts).
import { expect } from "chai";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BmcLies } from "../../lib/cluster/bmc-lies.js";
import { startKindPowerWebhook, type KindPowerWebhook } from "../../lib/cluster/kind/power-webhook/server.js";
import { servingCertificate, type ServingTls } from "../../lib/cluster/kind/power-webhook/tls.js";
import type { FenceTarget } from "../../lib/controller/drivers/types.js";
import { WebhookFenceDriver } from "../../lib/controller/drivers/webhook.js";
import { httpRequest } from "../../lib/util/http.js";
import { listeningOn, rekindleRejection } from "../support/assertions.js";
import { CLUSTER, FakeKindDriver, recordingProgress, TOKEN } from "../support/fake-kind-power.js";

describe("kind power webhook over HTTPS with the controller's webhook driver", function () {
  this.timeout(20_000);
  let driver: FakeKindDriver;
  let progress: ReturnType<typeof recordingProgress>;
  let tls: ServingTls;
  let caDir = "";
  let caFile = "";
  let service: KindPowerWebhook;
  const lies = new BmcLies();

  beforeEach(function () {
    driver = new FakeKindDriver();
    progress = recordingProgress();
  });

  before(async function () {
    tls = await servingCertificate({ ips: ["127.0.0.1"] });
    caDir = mkdtempSync(join(tmpdir(), "rekindle-power-webhook-"));
    caFile = join(caDir, "ca.crt");
    writeFileSync(caFile, tls.ca);
  });

  after(function () {
    rmSync(caDir, { recursive: true, force: true });
  });

  beforeEach(async function () {
    service = await startKindPowerWebhook({
      cluster: CLUSTER,
      host: "127.0.0.1",
      token: TOKEN,
      tls,
      driver,
      progress,
      powerableNodes: null,
      lies,
    });
  });

  afterEach(async function () {
    lies.clearAll();
    await service.close();
  });

  const target = (node: string, token = TOKEN): FenceTarget => ({
    node,
    options: { url: service.url, caFile },
    credentials: { token },
  });

  it("serves the webhook driver's contract at the URL it returns, verified with its CA", async function () {
    expect(service.url).to.match(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(service.caPem).to.equal(tls.ca);
    const client = new WebhookFenceDriver();
    const node = `${CLUSTER}-worker2`;
    expect(await client.powerState(target(node))).to.equal("on");
    await client.powerOff(target(node));
    await client.powerOff(target(node)); // idempotent
    expect(await client.powerState(target(node))).to.equal("off");
    await client.powerOn(target(node));
    expect(await client.powerState(target(node))).to.equal("on");
    expect(driver.calls).to.deep.equal([`off ${node}`, `on ${node}`]);
  });

  it("lies to the webhook driver as told: reads off while on, a power-off that does nothing", async function () {
    const client = new WebhookFenceDriver();
    const node = `${CLUSTER}-worker2`;
    lies.set(node, { powerReadsOff: true });
    expect(await client.powerState(target(node)), "the BMC lies").to.equal("off");
    expect(driver.states.get(node), "the node runs").to.equal("on");
    expect(await client.powerState(target(`${CLUSTER}-worker`)), "another node's BMC").to.equal("on");
    lies.set(node, { powerOffNoop: true });
    expect(await client.powerState(target(node)), "reads tell the truth again").to.equal("on");
    await client.powerOff(target(node));
    expect(driver.calls, "the power-off was acknowledged and not done").to.deep.equal([]);
    expect(driver.states.get(node)).to.equal("on");
    expect(progress.lines).to.include(
      `kind power webhook: power-off ${node}: acknowledged, not done (its BMC lies)`,
    );
    lies.clear(node);
    await client.powerOff(target(node));
    expect(driver.calls).to.deep.equal([`off ${node}`]);
    expect(await client.powerState(target(node))).to.equal("off");
  });

  it("refuses a wrong token and an unknown node, in words the driver passes on", async function () {
    const client = new WebhookFenceDriver();
    const refused = await rekindleRejection(client.powerOff(target(`${CLUSTER}-worker`, "wrong")));
    expect(refused.message).to.include("answered 401");
    const unknown = await rekindleRejection(client.powerOff(target("other-worker")));
    expect(unknown.message).to.include("answered 404");
    expect(driver.states.get(`${CLUSTER}-worker`)).to.equal("on");
  });

  it("answers 400 to a bad body and 413 to a huge one", async function () {
    const request = (json: unknown) =>
      httpRequest("POST", `${service.url}/power-off`, { ca: tls.ca, bearerToken: TOKEN, json });
    expect((await request("not an object")).status).to.equal(400);
    const huge = await request({ node: "x".repeat(20_000) });
    expect(huge.status).to.equal(413);
    expect(JSON.parse(huge.body)).to.have.property("error");
  });

  it("generates a token when given none, and stops listening on close (twice is fine)", async function () {
    const own = await startKindPowerWebhook({
      cluster: CLUSTER,
      host: "127.0.0.1",
      tls,
      driver,
      powerableNodes: null,
    });
    expect(own.token).to.match(/^[A-Za-z0-9_-]{43}$/);
    const port = Number(new URL(own.url).port);
    expect(await listeningOn(port)).to.equal(true);
    expect(
      await new WebhookFenceDriver().powerState({
        ...target(`${CLUSTER}-worker`, own.token),
        options: { url: own.url, caFile },
      }),
    ).to.equal("on");
    await own.close();
    await own[Symbol.asyncDispose]();
    expect(await listeningOn(port)).to.equal(false);
  });

  it("closes when its signal aborts, after the power action under way", async function () {
    const controller = new AbortController();
    const own = await startKindPowerWebhook({
      cluster: CLUSTER,
      host: "127.0.0.1",
      tls,
      driver,
      signal: controller.signal,
      powerableNodes: null,
    });
    const port = Number(new URL(own.url).port);
    const off = new WebhookFenceDriver().powerOff({
      ...target(`${CLUSTER}-worker`, own.token),
      options: { url: own.url, caFile },
    });
    while (driver.stateCalls === 0) await new Promise((resolve) => setTimeout(resolve, 2)); // reached the driver
    controller.abort();
    await off;
    await own.close();
    expect(driver.states.get(`${CLUSTER}-worker`)).to.equal("off");
    expect(await listeningOn(port)).to.equal(false);
  });

  it("makes its own certificate for the host it listens on", async function () {
    const own = await startKindPowerWebhook({
      cluster: CLUSTER,
      host: "127.0.0.1",
      token: TOKEN,
      driver,
      powerableNodes: null,
    });
    try {
      const response = await httpRequest("GET", `${own.url}/power-state?node=${CLUSTER}-worker`, {
        ca: own.caPem,
        bearerToken: TOKEN,
      });
      expect(JSON.parse(response.body)).to.deep.equal({ node: `${CLUSTER}-worker`, state: "on" });
    } finally {
      await own.close();
    }
  });

  it("refuses a token a header cannot carry, a host with no one address, and a taken port", async function () {
    const bad = await rekindleRejection(
      startKindPowerWebhook({ cluster: CLUSTER, host: "127.0.0.1", token: "two words", tls, driver }),
    );
    expect(bad.code).to.equal("INVALID_INPUT");
    const anyHost = await rekindleRejection(
      startKindPowerWebhook({ cluster: CLUSTER, host: "0.0.0.0", token: TOKEN, driver }),
    );
    expect(anyHost.message).to.include("names no one address");
    const taken = await rekindleRejection(
      startKindPowerWebhook({
        cluster: CLUSTER,
        host: "127.0.0.1",
        port: Number(new URL(service.url).port),
        tls,
        driver,
      }),
    );
    expect(taken.code).to.equal("CONFLICT");
  });
});
