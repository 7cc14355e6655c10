// The kind power webhook's logic with a fake fence driver: routes, bearer auth, validation,
// idempotent and serialised power actions, draining; then over HTTPS with the controller's own
// webhook driver (the certificate and gateway helpers: kind-power-webhook-tls.test.ts); a lying
// BMC (power reads "off", a power-off acknowledged and not done), as the webhook driver sees it.
import { expect } from "chai";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BmcLies } from "../../lib/cluster/bmc-lies.js";
import { PowerRequestHandler, type PowerRequest } from "../../lib/cluster/kind/power-webhook/handler.js";
import { startKindPowerWebhook, type KindPowerWebhook } from "../../lib/cluster/kind/power-webhook/server.js";
import { servingCertificate, type ServingTls } from "../../lib/cluster/kind/power-webhook/tls.js";
import type { FenceDriver, FenceTarget, PowerState } from "../../lib/controller/drivers/types.js";
import { WebhookFenceDriver } from "../../lib/controller/drivers/webhook.js";
import { RekindleError } from "../../lib/errors.js";
import { httpRequest } from "../../lib/util/http.js";
import type { Progress } from "../../lib/util/progress.js";
import { listeningOn, rekindleRejection } from "../support/assertions.js";

const CLUSTER = "kind-test";
const TOKEN = "s3cret-token";

/**
 * Nodes of CLUSTER in memory, as strict as an engine: stopping a stopped container or starting a
 * started one fails (dockerode's 304), and each call takes a moment, so races would show.
 */
class FakeKindDriver implements FenceDriver {
  readonly name = "fake-docker";
  readonly calls: string[] = [];
  readonly states = new Map<string, "on" | "off">([
    [`${CLUSTER}-worker`, "on"],
    [`${CLUSTER}-worker2`, "on"],
  ]);
  failWith: Error | undefined;
  stateCalls = 0;

  async #node(target: FenceTarget): Promise<"on" | "off"> {
    await new Promise((resolve) => setTimeout(resolve, 10));
    if (this.failWith) throw this.failWith;
    const state = this.states.get(target.node);
    if (target.options["cluster"] !== CLUSTER || state === undefined) {
      throw new RekindleError("NOT_FOUND", `no container "${target.node}"`);
    }
    return state;
  }

  async powerOff(target: FenceTarget): Promise<void> {
    this.calls.push(`off ${target.node}`);
    if ((await this.#node(target)) === "off") throw new Error("container already stopped");
    this.states.set(target.node, "off");
  }

  async powerOn(target: FenceTarget): Promise<void> {
    this.calls.push(`on ${target.node}`);
    if ((await this.#node(target)) === "on") throw new Error("container already started");
    this.states.set(target.node, "on");
  }

  async powerState(target: FenceTarget): Promise<PowerState> {
    this.stateCalls += 1;
    return this.#node(target);
  }
}

function recordingProgress(): Progress & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info(message) {
      lines.push(message);
    },
    phase() {
      return { update: () => undefined, end: () => 0 };
    },
  };
}

const auth = `Bearer ${TOKEN}`;
const post = (path: string, body: unknown, authorization: string | undefined = auth): PowerRequest => ({
  method: "POST",
  url: path,
  authorization,
  body: typeof body === "string" ? body : JSON.stringify(body),
});
const get = (url: string, authorization: string | undefined = auth): PowerRequest => ({
  method: "GET",
  url,
  authorization,
  body: "",
});

describe("kind power webhook", function () {
  let driver: FakeKindDriver;
  let progress: ReturnType<typeof recordingProgress>;
  let handler: PowerRequestHandler;

  beforeEach(function () {
    driver = new FakeKindDriver();
    progress = recordingProgress();
    handler = new PowerRequestHandler({ cluster: CLUSTER, token: TOKEN, driver, progress });
  });

  describe("request handling", function () {
    it("refuses a missing, wrong or non-bearer token with 401, before touching the driver", async function () {
      for (const authorization of [
        undefined,
        "Bearer wrong",
        `Basic ${TOKEN}`,
        `Bearer ${TOKEN}x`,
        "Bearer",
      ]) {
        // Spread, not the argument: an undefined argument would take the default (the right token).
        const response = await handler.handle({
          ...post("/power-off", { node: `${CLUSTER}-worker` }),
          authorization,
        });
        expect(response.status, String(authorization)).to.equal(401);
        expect(response.headers["www-authenticate"]).to.match(/^Bearer/);
      }
      expect(
        (await handler.handle(get(`/power-state?node=${CLUSTER}-worker`, "Bearer nope"))).status,
      ).to.equal(401);
      expect(driver.calls).to.deep.equal([]);
      expect(driver.states.get(`${CLUSTER}-worker`)).to.equal("on");
      expect(progress.lines.filter((l) => l.includes("refused"))).to.have.length(6);
      expect(progress.lines.join("\n")).not.to.include(TOKEN);
    });

    it("powers only the nodes it is given (the workers): the control plane is 404 and never touched", async function () {
      const workersOnly = new PowerRequestHandler({
        cluster: CLUSTER,
        token: TOKEN,
        driver,
        progress,
        powerableNodes: () => Promise.resolve([`${CLUSTER}-worker`]),
      });
      const refused = await workersOnly.handle(post("/power-off", { node: `${CLUSTER}-control-plane` }));
      expect(refused.status).to.equal(404);
      expect(refused.body).to.deep.equal({
        error: `no worker node "${CLUSTER}-control-plane" in kind cluster ${CLUSTER}; workers: ${CLUSTER}-worker`,
      });
      expect(driver.calls).to.deep.equal([]);
      expect((await workersOnly.handle(post("/power-off", { node: `${CLUSTER}-worker` }))).status).to.equal(
        200,
      );
    });

    it("accepts the scheme in any case (RFC 7235)", async function () {
      const response = await handler.handle(get(`/power-state?node=${CLUSTER}-worker`, `bearer ${TOKEN}`));
      expect(response.status).to.equal(200);
    });

    it("answers 404 for another path and 405 (with Allow) for another method", async function () {
      const missing = await handler.handle(post("/reboot", { node: `${CLUSTER}-worker` }));
      expect(missing.status).to.equal(404);
      expect(missing.body["error"]).to.include("/power-off, /power-on, /power-state");
      const wrongGet = await handler.handle(get(`/power-off?node=${CLUSTER}-worker`));
      expect(wrongGet.status).to.equal(405);
      expect(wrongGet.headers["allow"]).to.equal("POST");
      const wrongPost = await handler.handle(post("/power-state", { node: `${CLUSTER}-worker` }));
      expect(wrongPost.status).to.equal(405);
      expect(wrongPost.headers["allow"]).to.equal("GET");
      const del = await handler.handle({ ...post("/power-on", {}), method: "DELETE" });
      expect(del.status).to.equal(405);
      expect(driver.calls).to.deep.equal([]);
    });

    it("answers 400 for a body that is not JSON, a missing or non-string node, or a bad node name", async function () {
      const cases: PowerRequest[] = [
        post("/power-off", "{not json"),
        post("/power-off", ""),
        post("/power-off", {}),
        post("/power-off", { node: 7 }),
        post("/power-off", "null"),
        post("/power-on", { name: `${CLUSTER}-worker` }),
        post("/power-off", { node: "../etc" }),
        post("/power-off", { node: "Worker_1" }),
        get("/power-state"),
        get("/power-state?node="),
      ];
      for (const request of cases) {
        const response = await handler.handle(request);
        expect(response.status, `${request.url} ${request.body}`).to.equal(400);
        expect(response.body["error"]).to.be.a("string").and.not.empty;
      }
      expect(driver.calls).to.deep.equal([]);
    });

    it("answers 404 naming the cluster for a node that is not one of its nodes", async function () {
      const response = await handler.handle(post("/power-off", { node: "other-worker" }));
      expect(response.status).to.equal(404);
      expect(response.body).to.deep.equal({ error: `no node "other-worker" in kind cluster ${CLUSTER}` });
      expect((await handler.handle(get("/power-state?node=other-worker"))).status).to.equal(404);
    });

    it("powers a node off and on, reports its state, and logs each action", async function () {
      const node = `${CLUSTER}-worker2`;
      expect(await handler.handle(get(`/power-state?node=${node}`))).to.deep.include({
        status: 200,
        body: { node, state: "on" },
      });
      const off = await handler.handle(post("/power-off", { node }));
      expect(off.status).to.equal(200);
      expect(off.headers["content-type"]).to.equal("application/json");
      expect(off.body).to.deep.equal({ node, state: "off", changed: true });
      expect((await handler.handle(get(`/power-state?node=${node}`))).body["state"]).to.equal("off");
      expect((await handler.handle(post("/power-on", { node }))).body).to.deep.equal({
        node,
        state: "on",
        changed: true,
      });
      expect(driver.states.get(`${CLUSTER}-worker`)).to.equal("on"); // the other node untouched
      expect(progress.lines).to.deep.equal([
        `kind power webhook: power-off ${node}: done (was on)`,
        `kind power webhook: power-on ${node}: done (was off)`,
      ]);
    });

    it("is idempotent: a repeated power-off changes nothing and says so", async function () {
      const node = `${CLUSTER}-worker`;
      await handler.handle(post("/power-off", { node }));
      const again = await handler.handle(post("/power-off", { node }));
      expect(again.status).to.equal(200);
      expect(again.body).to.deep.equal({ node, state: "off", changed: false });
      expect(driver.calls).to.deep.equal([`off ${node}`]);
      expect(progress.lines.at(-1)).to.equal(`kind power webhook: power-off ${node}: already off`);
    });

    it("serialises concurrent power-offs of one node: one stop, every caller told 200", async function () {
      const node = `${CLUSTER}-worker`;
      const responses = await Promise.all(
        Array.from({ length: 5 }, () => handler.handle(post("/power-off", { node }))),
      );
      expect(responses.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200]);
      expect(responses.filter((r) => r.body["changed"] === true)).to.have.length(1);
      expect(driver.calls).to.deep.equal([`off ${node}`]);
      expect(driver.states.get(node)).to.equal("off");
    });

    it("keeps the order of interleaved off and on calls for one node", async function () {
      const node = `${CLUSTER}-worker`;
      const responses = await Promise.all([
        handler.handle(post("/power-off", { node })),
        handler.handle(post("/power-on", { node })),
        handler.handle(post("/power-off", { node })),
      ]);
      expect(responses.map((r) => r.body["changed"])).to.deep.equal([true, true, true]);
      expect(driver.calls).to.deep.equal([`off ${node}`, `on ${node}`, `off ${node}`]);
      expect(driver.states.get(node)).to.equal("off");
    });

    it("answers 500 naming an engine failure, and serves the next request", async function () {
      driver.failWith = new Error("connect ENOENT /var/run/docker.sock");
      const failed = await handler.handle(post("/power-off", { node: `${CLUSTER}-worker` }));
      expect(failed.status).to.equal(500);
      expect(failed.body["error"]).to.include("ENOENT");
      expect(progress.lines.at(-1)).to.include("failed: connect ENOENT");
      driver.failWith = undefined;
      expect((await handler.handle(post("/power-off", { node: `${CLUSTER}-worker` }))).status).to.equal(200);
    });

    it("drains: requests under way finish, later ones are told 503", async function () {
      const node = `${CLUSTER}-worker`;
      const inFlight = handler.handle(post("/power-off", { node }));
      const drained = handler.drain();
      expect((await handler.handle(get(`/power-state?node=${node}`))).status).to.equal(503);
      await drained;
      expect(driver.states.get(node)).to.equal("off");
      expect((await inFlight).status).to.equal(200);
    });
  });

  describe("over HTTPS with the controller's webhook driver", function () {
    this.timeout(20_000);
    let tls: ServingTls;
    let caDir = "";
    let caFile = "";
    let service: KindPowerWebhook;
    const lies = new BmcLies();

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
});
