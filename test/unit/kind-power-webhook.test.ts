// The kind power webhook's logic with a fake fence driver: routes, bearer auth, validation,
// idempotent and serialised power actions, draining; then over HTTPS with the controller's own
// webhook driver (the certificate and gateway helpers: kind-power-webhook-tls.test.ts); a lying
// BMC (power reads "off", a power-off acknowledged and not done), as the webhook driver sees it.
import { expect } from "chai";
import { PowerRequestHandler, type PowerRequest } from "../../lib/cluster/kind/power-webhook/handler.js";
import { CLUSTER, FakeKindDriver, get, post, recordingProgress, TOKEN } from "../support/fake-kind-power.js";

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
});
