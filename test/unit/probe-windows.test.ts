// A probed workload in the model, the budgets and the file checks: the probe's windows only where
// the fault took every pod behind the Service, servingWithin counting the probe's answer, and a
// probe refused (exit 2) when its Service is missing, headless or lacks its port.
import { expect } from "chai";
import { parse } from "yaml";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { checkBudgets } from "../../lib/expect/budgets.js";
import { knobs, nominalWindows, type ExpectedMilestone } from "../../lib/expect/model.js";
import { tolerationDefaults, workloadFacts, type KubeObject } from "../../lib/expect/workload-facts.js";
import { expectedScenarioWindows, type WorkloadSituation } from "../../lib/expect/workload-model.js";
import type { WorkloadObjects } from "../../lib/scenario-file/manifests.js";
import { probeTargets } from "../../lib/scenario-file/probes.js";
import type { ScenarioFile, WorkloadSpec } from "../../lib/scenario-file/types.js";
import { rekindleThrow, expectNoneOf } from "../support/assertions.js";
import { workloadHead } from "../support/workload-yaml.js";

const fast = TIMING_PROFILES.fast;

function deployment(replicas: number): KubeObject {
  return parse(
    `${workloadHead("Deployment", "web", replicas)} { containers: [{ name: c, image: i }] }`,
  ) as KubeObject;
}

function service(spec: string): KubeObject {
  return parse(`
apiVersion: v1
kind: Service
metadata: { name: web }
spec: ${spec}`) as KubeObject;
}

const WEB_SERVICE = service("{ selector: { app: web }, ports: [{ port: 80, targetPort: 8080 }] }");

function windows(
  probe: "http" | "tcp" | undefined,
  more: Partial<WorkloadSituation> = {},
  replicas = 1,
): ExpectedMilestone[] {
  const facts = workloadFacts("web", [deployment(replicas), WEB_SERVICE], tolerationDefaults(fast));
  const { lostPods = replicas, ...situation } = more;
  return expectedScenarioWindows([{ facts: probe === undefined ? facts : { ...facts, probe }, lostPods }], {
    fault: "stop",
    knobs: knobs({ profile: fast, podStartMs: 1000, attachMs: 500, slackMs: 0 }),
    eviction: fast.simKubelet,
    ...situation,
  });
}

const named = (ws: readonly ExpectedMilestone[], name: string) => ws.find((w) => w.name === name);

describe("a probed workload in the model", function () {
  it("every pod lost to a stop: the probe fails at once, and answers again just after the Service serves", function () {
    const ws = windows("http");
    expect(named(ws, "web:probe-failing")).to.deep.include({
      after: "fault-injected",
      minMs: 0,
      maxMs: 5000,
    });
    expect(named(ws, "web:answering")).to.deep.include({ after: "web:serving", minMs: 0, maxMs: 5000 });
    const serving = nominalWindows(ws).find((w) => w.name === "web:serving");
    const answering = nominalWindows(ws).find((w) => w.name === "web:answering");
    expect(answering?.minMs).to.equal(serving?.minMs);
    expect(answering?.maxMs).to.equal((serving?.maxMs ?? 0) + 5000);
  });

  it("no probe windows without a probe; none when replicas survive (the Service may still answer)", function () {
    expectNoneOf(
      windows(undefined).map((w) => w.name),
      ["web:probe-failing", "web:answering"],
      "the windows",
    );
    const survived = windows("http", { lostPods: 1 }, 2).map((w) => w.name);
    expect(survived).to.not.include("web:probe-failing");
    expect(survived).to.not.include("web:answering");
  });

  it("untouched: the probe never fails", function () {
    const ws = windows("tcp", { lostPods: 0 });
    expect(named(ws, "web:probe-failing")).to.deep.include({ maxMs: null });
  });

  it("a partition fails an HTTP probe (frozen server) but not necessarily a TCP one (the node's kernel still accepts)", function () {
    const partition = { fault: "partition" as const, durationMs: 120_000 };
    expect(named(windows("http", partition), "web:probe-failing")).to.not.equal(undefined);
    expect(named(windows("tcp", partition), "web:probe-failing")).to.equal(undefined);
  });
});

describe("servingWithin for a probed workload", function () {
  const input = (milestones: { name: string; atMs: number }[]) => ({
    milestones,
    transitions: [],
    faultAtMs: 0,
    faultNodes: ["worker"],
    workloads: [{ id: "web", namespace: "ns", matchLabels: { app: "web" }, wanted: 1 }],
  });
  const budget = [{ workload: "web", servingWithinMs: 40_000 }];

  it("is the later of the Service's endpoints and the probe's answer", function () {
    const [late] = checkBudgets(
      budget,
      input([
        { name: "web:serving", atMs: 38_000 },
        { name: "web:probe-failing", atMs: 1000 },
        { name: "web:answering", atMs: 41_500 },
      ]),
    );
    expect(late).to.deep.include({ measured: "41.5 s", passed: false, value: 41_500 });
    const [never] = checkBudgets(
      budget,
      input([
        { name: "web:serving", atMs: 38_000 },
        { name: "web:probe-failing", atMs: 1000 },
      ]),
    );
    expect(never).to.deep.include({ measured: "not answering", passed: false, value: null });
    const [unprobed] = checkBudgets(budget, input([{ name: "web:serving", atMs: 38_000 }]));
    expect(unprobed).to.deep.include({ measured: "38.0 s", passed: true });
  });
});

describe("a scenario file's probe targets", function () {
  const probed: WorkloadSpec = {
    name: "web",
    source: { kind: "manifests", paths: ["/s/web.yaml"] },
    probe: { kind: "http", port: 80, path: "/healthz" },
  };
  const file: ScenarioFile = {
    path: "/s/scenario.yaml",
    name: "s",
    cluster: {},
    workloads: [probed],
    fault: { type: "stop", target: { kind: "workload", workload: "web" } },
    controller: { enabled: false },
    budgets: [],
    repeat: 1,
    positions: new Map(),
  };
  const objects = (...extra: KubeObject[]): WorkloadObjects[] => [
    { workload: probed, objects: [deployment(1), ...extra] },
  ];
  const targets = (os: WorkloadObjects[], service?: string) => probeTargets(file, os, () => service);

  it("goes through the workload's Service, at one of its ports", function () {
    expect(targets(objects(WEB_SERVICE), "web")).to.deep.equal([
      { workload: "web", service: "web", check: { kind: "http", port: 80, path: "/healthz" } },
    ]);
  });

  it("refuses (exit 2) a workload with no Service, a headless one, and a port the Service has not", function () {
    const noService = rekindleThrow(() => targets(objects()));
    expect(noService.code).to.equal("INVALID_INPUT");
    expect(noService.message).to.equal(
      "/s/scenario.yaml: workload web's probe: no Service selects its pods, so there is nothing to probe",
    );
    const headless = service("{ clusterIP: None, selector: { app: web }, ports: [{ port: 80 }] }");
    expect(rekindleThrow(() => targets(objects(headless), "web")).message).to.include(
      "Service web has no cluster IP (headless or ExternalName)",
    );
    const otherPort = service(
      "{ selector: { app: web }, ports: [{ port: 8080 }, { port: 53, protocol: UDP }] }",
    );
    expect(rekindleThrow(() => targets(objects(otherPort), "web")).message).to.include(
      "Service web has no TCP port 80; its ports: 8080",
    );
  });
});
