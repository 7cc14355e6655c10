import { expect } from "chai";
import { createServer, type Server } from "node:http";
import { parseDuration, parseMaxUnhealthy, unhealthyBudget } from "../../lib/controller/config.js";
import { WebhookFenceDriver } from "../../lib/controller/drivers/webhook.js";
import { templateFor } from "../../lib/controller/fence-config.js";
import {
  decide,
  isFinished,
  keepsFenceWhileAlive,
  retryBackoffMs,
  type FenceStatus,
} from "../../lib/controller/fence-state.js";
import { guardDecision, type GuardNode } from "../../lib/controller/guard.js";
import { RekindleError } from "../../lib/errors.js";

const T = Date.parse("2026-01-01T00:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

describe("controller: guard", function () {
  const nodes = (unhealthy: string[], extra: Partial<Record<string, Partial<GuardNode>>> = {}): GuardNode[] =>
    ["a1", "a2", "a3", "b1", "b2"].map((name) => ({
      name,
      zone: name.startsWith("a") ? "zone-a" : "zone-b",
      controlPlane: false,
      excluded: false,
      unhealthy: unhealthy.includes(name),
      fencing: false,
      ...extra[name],
    }));

  it("allows one lost node", function () {
    expect(guardDecision("a1", { nodes: nodes(["a1"]), maxUnhealthy: "40%", paused: false })).to.deep.equal({
      allowed: true,
    });
  });

  it("holds 2 of 3 in a zone when the zone's budget is 1, naming the zone", function () {
    const decision = guardDecision("a1", { nodes: nodes(["a1", "a2"]), maxUnhealthy: "40%", paused: false });
    expect(decision).to.deep.include({ allowed: false, reason: "ZoneBudget" });
    expect(decision.allowed ? "" : decision.message).to.include("2 of 3 nodes in zone zone-a");
  });

  it("holds beyond the cluster budget (count form)", function () {
    const decision = guardDecision("b1", { nodes: nodes(["a1", "b1"]), maxUnhealthy: "1", paused: false });
    expect(decision).to.deep.include({ allowed: false, reason: "ClusterBudget" });
  });

  it("counts nodes already being fenced", function () {
    const decision = guardDecision("a2", {
      nodes: nodes(["a2"], { a1: { fencing: true } }),
      maxUnhealthy: "40%",
      paused: false,
    });
    expect(decision).to.deep.include({ allowed: false, reason: "ZoneBudget" });
  });

  it("never fences control-plane or excluded nodes, nor anything while paused", function () {
    expect(
      guardDecision("a1", {
        nodes: nodes(["a1"], { a1: { controlPlane: true } }),
        maxUnhealthy: "40%",
        paused: false,
      }),
    ).to.deep.include({ reason: "ControlPlane" });
    expect(
      guardDecision("a1", {
        nodes: nodes(["a1"], { a1: { excluded: true } }),
        maxUnhealthy: "40%",
        paused: false,
      }),
    ).to.deep.include({ reason: "Excluded" });
    expect(guardDecision("a1", { nodes: nodes(["a1"]), maxUnhealthy: "40%", paused: true })).to.deep.include({
      reason: "Paused",
    });
  });

  it("decides the same on a frozen view (counted once per pass) as on one counted per call", function () {
    // Every node of a 5-node view, each state of a1..b2 in turn: troubled or not, fencing, control plane.
    const states: Partial<GuardNode>[] = [
      {},
      { unhealthy: true },
      { fencing: true },
      { controlPlane: true, unhealthy: true },
    ];
    const names = ["a1", "a2", "a3", "b1", "b2"];
    for (let mix = 0; mix < states.length ** names.length; mix += 7) {
      const extra = Object.fromEntries(
        names.map((name, i) => [name, states[Math.floor(mix / states.length ** i) % states.length] ?? {}]),
      );
      const open = nodes([], extra);
      const frozen = Object.freeze(open.map((n) => Object.freeze({ ...n })));
      for (const candidate of names) {
        for (const maxUnhealthy of ["40%", "1", "2"]) {
          const input = { maxUnhealthy, paused: false };
          expect(
            guardDecision(candidate, { nodes: frozen, ...input }),
            `${candidate} in ${JSON.stringify(extra)}`,
          ).to.deep.equal(guardDecision(candidate, { nodes: open, ...input }));
        }
      }
    }
  });

  it("counts a view built anew for the next pass anew", function () {
    const freeze = (view: GuardNode[]) => Object.freeze(view.map((n) => Object.freeze(n)));
    expect(
      guardDecision("a1", { nodes: freeze(nodes([])), maxUnhealthy: "1", paused: false }).allowed,
    ).to.equal(true);
    expect(
      guardDecision("a1", { nodes: freeze(nodes(["a2"])), maxUnhealthy: "1", paused: false }),
    ).to.deep.include({ allowed: false, reason: "ClusterBudget" });
  });

  it("budgets: percentages round down but allow one node; counts are absolute", function () {
    expect(unhealthyBudget("40%", 5)).to.equal(2);
    expect(unhealthyBudget("40%", 2)).to.equal(1);
    expect(unhealthyBudget("0%", 5)).to.equal(0);
    expect(unhealthyBudget("3", 2)).to.equal(3);
    expect(parseMaxUnhealthy("25%")).to.deep.equal({ percent: 25 });
    expect(() => parseMaxUnhealthy("half")).to.throw(RekindleError, /maxUnhealthy/);
    expect(() => parseMaxUnhealthy("140%")).to.throw(RekindleError, /0% to 100%/);
  });

  it("durations", function () {
    expect(parseDuration("--unhealthy-after", "20s")).to.equal(20_000);
    expect(parseDuration("--unhealthy-after", "1500ms")).to.equal(1_500);
    expect(parseDuration("--unhealthy-after", "2m")).to.equal(120_000);
    expect(() => parseDuration("--unhealthy-after", "soon")).to.throw(RekindleError, /--unhealthy-after/);
  });
});

describe("controller: fence state machine (fake clock)", function () {
  const options = {
    fenceRetries: 3,
    retryBackoffMs: 10_000,
    maxRetryBackoffMs: 60_000,
    recoveryTimeoutMs: 600_000,
    healthyBeforeUnfenceMs: 10_000,
    staleWaitMs: 120_000,
  };
  const status = (s: Partial<FenceStatus>): FenceStatus => ({
    step: "power-management",
    phase: "new",
    retries: 0,
    lastTransitionTime: iso(T),
    ...s,
  });
  const lost = { health: "unhealthy", healthyForMs: 0, stalePods: 0, nowMs: T } as const;
  const back = (healthyForMs: number, stalePods = 0) =>
    ({ health: "healthy", healthyForMs, stalePods, nowMs: T }) as const;

  it("walks a lost node through fence → taint → cleanup → recovery", function () {
    expect(decide(status({ phase: "new" }), lost, options)).to.equal("power-off");
    expect(decide(status({ phase: "running" }), lost, options)).to.equal("confirm-off");
    expect(decide(status({ phase: "done" }), lost, options)).to.equal("taint");
    expect(decide(status({ step: "taint", phase: "done" }), lost, options)).to.equal("cleanup");
    expect(decide(status({ step: "cleanup", phase: "running" }), lost, options)).to.equal("cleanup");
    expect(decide(status({ step: "cleanup", phase: "done" }), lost, options)).to.equal("begin-recovery");
    expect(decide(status({ step: "recovery", phase: "running" }), lost, options)).to.equal("wait");
  });

  it("never taints before a confirmed fence: a node back mid-fence is let go", function () {
    for (const phase of ["new", "running", "error"] as const)
      expect(decide(status({ phase }), back(0), options), phase).to.equal("abort");
  });

  it("a node running again after its confirmed power-off is neither tainted nor cleaned further", function () {
    const suspect = { ...lost, health: "suspect" } as const;
    for (const observation of [back(0), suspect]) {
      expect(decide(status({ phase: "done" }), observation, options)).to.equal("abandon");
      expect(decide(status({ step: "taint", phase: "done" }), observation, options)).to.equal("abandon");
      expect(decide(status({ step: "cleanup", phase: "running" }), observation, options)).to.equal("abandon");
    }
    // No evidence either way (a restarted or formerly blind controller): no side effect, no letting go.
    const unobserved = { ...lost, health: "unobserved" } as const;
    expect(decide(status({ phase: "new" }), unobserved, options)).to.equal("wait");
    expect(decide(status({ phase: "running" }), unobserved, options)).to.equal("confirm-off");
    expect(decide(status({ phase: "done" }), unobserved, options)).to.equal("wait");
    expect(decide(status({ step: "taint", phase: "done" }), unobserved, options)).to.equal("wait");
    expect(decide(status({ step: "cleanup", phase: "running" }), unobserved, options)).to.equal("wait");
    expect(decide(status({ step: "recovery", phase: "running" }), unobserved, options)).to.equal("wait");
    // Cleanup finished: recovery begins whatever the node does now.
    expect(decide(status({ step: "cleanup", phase: "done" }), back(0), options)).to.equal("begin-recovery");
  });

  it("retries a failed fence after the backoff, then with a doubling backoff, never giving up", function () {
    const failed = status({ phase: "error", retries: 1, lastTransitionTime: iso(T) });
    expect(decide(failed, { ...lost, nowMs: T + 9_999 }, options)).to.equal("wait");
    expect(decide(failed, { ...lost, nowMs: T + 10_000 }, options)).to.equal("retry");
    // Past fenceRetries the backoff doubles per failure (20 s, 40 s), capped at maxRetryBackoff (60 s).
    const fourth = status({ phase: "error", retries: 4 });
    expect(decide(fourth, { ...lost, nowMs: T + 19_999 }, options)).to.equal("wait");
    expect(decide(fourth, { ...lost, nowMs: T + 20_000 }, options)).to.equal("retry");
    expect(retryBackoffMs(3, options)).to.equal(10_000);
    expect(retryBackoffMs(5, options)).to.equal(40_000);
    expect(retryBackoffMs(50, options)).to.equal(60_000);
    const many = status({ phase: "error", retries: 40 });
    expect(decide(many, { ...lost, nowMs: T + 59_999 }, options)).to.equal("wait");
    expect(decide(many, { ...lost, nowMs: T + 60_000 }, options)).to.equal("retry");
    // Only a node still lost is retried: one back is let go (abort reads its power state).
    expect(decide(many, { ...back(0), nowMs: T + 60_000 }, options)).to.equal("abort");
  });

  it("re-evaluates a recovery that never completes, except a fenced, cleaned node that stays lost", function () {
    const aborted = status({ step: "recovery", phase: "running" });
    const later = (ms: number, health: "healthy" | "suspect" | "unobserved" | "unhealthy") =>
      ({ health, healthyForMs: 0, stalePods: 0, nowMs: T + ms }) as const;
    expect(decide(aborted, later(599_999, "unhealthy"), options)).to.equal("wait");
    expect(decide(aborted, later(600_000, "unhealthy"), options)).to.equal("reevaluate");
    expect(decide(aborted, later(600_000, "suspect"), options)).to.equal("reevaluate");
    // No evidence either way (just restarted or blind): wait for it.
    expect(decide(aborted, later(600_000, "unobserved"), options)).to.equal("wait");
    const cleaned = status({ step: "recovery", phase: "running", cleanedAt: iso(T) });
    expect(decide(cleaned, later(3_600_000, "unhealthy"), options)).to.equal("wait");
    expect(decide(cleaned, later(600_000, "suspect"), options)).to.equal("reevaluate");
    // A node ready to be let go is let go, however long it took.
    expect(decide(aborted, { ...back(10_000), nowMs: T + 900_000 }, options)).to.equal("finish-recovery");
  });

  it("keeps a fence whose node renewed just before its confirmed power-off, not one running long after", function () {
    const confirmed = status({ phase: "done", fencedAt: iso(T) });
    const timing = { unhealthyAfterMs: 20_000, checkIntervalMs: 1_000 };
    expect(keepsFenceWhileAlive(confirmed, T + 22_000, timing)).to.equal(true);
    expect(keepsFenceWhileAlive(confirmed, T + 22_001, timing)).to.equal(false);
    // After the taint the node was judged lost after its power-off: alive again means it runs.
    expect(
      keepsFenceWhileAlive(status({ step: "taint", phase: "done", fencedAt: iso(T) }), T, timing),
    ).to.equal(false);
    expect(keepsFenceWhileAlive(status({ phase: "done" }), T, timing)).to.equal(false);
  });

  it("finishes recovery once the node has been healthy for a while and has no stale pods", function () {
    const recovering = status({ step: "recovery", phase: "running" });
    expect(decide(recovering, lost, options)).to.equal("wait");
    expect(decide(recovering, back(9_999), options)).to.equal("wait");
    expect(decide(recovering, back(10_000, 2), options)).to.equal("wait");
    expect(decide(recovering, back(10_000), options)).to.equal("finish-recovery");
  });

  it("bounds the wait for pods stuck in deletion on a returned node", function () {
    const recovering = status({ step: "recovery", phase: "running" });
    expect(decide(recovering, back(119_999, 1), options)).to.equal("wait");
    expect(decide(recovering, back(120_000, 1), options)).to.equal("finish-recovery");
    expect(isFinished(status({ step: "recovery", phase: "done" }))).to.equal(true);
    expect(isFinished(status({ step: "recovery", phase: "running" }))).to.equal(false);
  });
});

describe("controller: fence config, webhook driver", function () {
  it("maps nodes to templates, with a default", function () {
    const config = {
      templates: { bmc: { driver: "redfish" }, sim: { driver: "sim" } },
      nodes: { "worker-1": "bmc" },
      defaultTemplate: "sim",
    };
    expect(templateFor(config, "worker-1").template.driver).to.equal("redfish");
    expect(templateFor(config, "worker-2").template.driver).to.equal("sim");
    expect(() => templateFor({ templates: {} }, "worker-1")).to.throw(
      RekindleError,
      /no fence template for node worker-1/,
    );
  });

  describe("webhook driver against a local HTTP server", function () {
    let server: Server;
    let url = "";
    const calls: string[] = [];
    let power = "on";
    before(async function () {
      server = createServer((req, res) => {
        calls.push(`${req.method ?? ""} ${req.url ?? ""} ${req.headers.authorization ?? ""}`);
        if (req.url?.startsWith("/fence/power-off")) power = "off";
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify(req.method === "GET" ? { state: power } : {}));
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const address = server.address();
      url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/fence`;
    });
    after(function () {
      server.close();
    });

    it("powers off with the Secret's token and confirms from power-state", async function () {
      const driver = new WebhookFenceDriver();
      const target = {
        node: "worker-1",
        options: { url, allowHttp: "true" },
        credentials: { token: "s3cret" },
      };
      expect(await driver.powerState(target)).to.equal("on");
      await driver.powerOff(target);
      expect(await driver.powerState(target)).to.equal("off");
      expect(calls).to.include("POST /fence/power-off Bearer s3cret");
      expect(calls).to.include("GET /fence/power-state?node=worker-1 Bearer s3cret");
    });
  });
});
