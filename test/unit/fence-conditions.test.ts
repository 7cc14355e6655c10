// NodeFence status.conditions: derived from step and phase through a fence's whole course, with
// lastTransitionTime kept while a condition's status holds and observedGeneration the object's
// generation; and written by the NodeFenceStore with every status write (a stand-in API server
// that records the patches).
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { parse } from "yaml";
import type { FenceCondition } from "../../lib/controller/fence-condition-types.js";
import { fenceCondition, fenceConditions } from "../../lib/controller/fence-conditions.js";
import type { FenceStatus, NodeFence } from "../../lib/controller/fence-state.js";
import { NodeFenceStore, partitionByName } from "../../lib/controller/node-fence-store.js";
import { k8s } from "../../lib/kube/client.js";
import { deployPath } from "../../lib/util/project-files.js";

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  "x-kubernetes-list-map-keys"?: string[];
}

const at = (s: number): string => new Date(Date.parse("2026-11-24T12:00:00Z") + s * 1000).toISOString();

/** Writes `statuses` in order, as the store would, and returns the conditions after each. */
function course(statuses: FenceStatus[], generation = 1): FenceCondition[][] {
  let previous: FenceCondition[] | undefined;
  return statuses.map((status, i) => {
    previous = fenceConditions(status, previous, generation, status.lastTransitionTime ?? at(i));
    return previous;
  });
}

function summary(conditions: readonly FenceCondition[]): string[] {
  return conditions.map((c) => `${c.type}=${c.status}/${c.reason}`);
}

describe("NodeFence conditions", function () {
  it("follow a fence from its start to the node's return", function () {
    const base = { retries: 0, detectedAt: at(0) };
    const fenced = { ...base, fencedAt: at(4) };
    const cleaned = { ...fenced, cleanedAt: at(9) };
    const steps = course([
      { ...base, step: "power-management", phase: "new", lastTransitionTime: at(0) },
      { ...base, step: "power-management", phase: "running", lastTransitionTime: at(1) },
      { ...fenced, step: "power-management", phase: "done", lastTransitionTime: at(4) },
      { ...fenced, step: "taint", phase: "done", lastTransitionTime: at(5) },
      { ...fenced, step: "cleanup", phase: "running", lastTransitionTime: at(6) },
      { ...cleaned, step: "cleanup", phase: "done", lastTransitionTime: at(9) },
      { ...cleaned, step: "recovery", phase: "running", lastTransitionTime: at(10) },
      { ...cleaned, step: "recovery", phase: "done", recoveredAt: at(60), lastTransitionTime: at(60) },
    ]);
    expect(steps.map(summary)).to.deep.equal([
      [
        "Processing=True/PowerManagementNew",
        "FenceSucceeded=Unknown/PowerOffPending",
        "WorkloadsReleased=False/PowerManagementNew",
      ],
      [
        "Processing=True/PowerManagementRunning",
        "FenceSucceeded=Unknown/PowerOffRequested",
        "WorkloadsReleased=False/PowerManagementRunning",
      ],
      [
        "Processing=True/PowerManagementDone",
        "FenceSucceeded=True/PowerOffConfirmed",
        "WorkloadsReleased=False/PowerManagementDone",
      ],
      [
        "Processing=True/TaintDone",
        "FenceSucceeded=True/PowerOffConfirmed",
        "WorkloadsReleased=False/TaintDone",
      ],
      [
        "Processing=True/CleanupRunning",
        "FenceSucceeded=True/PowerOffConfirmed",
        "WorkloadsReleased=False/CleanupRunning",
      ],
      [
        "Processing=True/CleanupDone",
        "FenceSucceeded=True/PowerOffConfirmed",
        "WorkloadsReleased=True/CleanupDone",
      ],
      [
        "Processing=True/RecoveryRunning",
        "FenceSucceeded=True/PowerOffConfirmed",
        "WorkloadsReleased=True/CleanupDone",
      ],
      [
        "Processing=False/Finished",
        "FenceSucceeded=True/PowerOffConfirmed",
        "WorkloadsReleased=True/CleanupDone",
      ],
    ]);
    const last = steps.at(-1) ?? [];
    // Each time is when that condition's status last changed, not the last write.
    expect(fenceCondition({ conditions: last }, "Processing")?.lastTransitionTime).to.equal(at(60));
    expect(fenceCondition({ conditions: last }, "FenceSucceeded")?.lastTransitionTime).to.equal(at(4));
    expect(fenceCondition({ conditions: last }, "WorkloadsReleased")?.lastTransitionTime).to.equal(at(9));
    expect(last.every((c) => c.observedGeneration === 1)).to.equal(true);
  });

  it("say why a fence failed, and that an aborted one never fenced", function () {
    const [failed] = course([
      {
        step: "power-management",
        phase: "error",
        retries: 1,
        message: "power off via redfish failed: HTTP 503",
        lastTransitionTime: at(3),
      },
    ]);
    expect(fenceCondition({ conditions: failed ?? [] }, "FenceSucceeded")).to.deep.include({
      status: "False",
      reason: "FenceFailed",
      message: "power off via redfish failed: HTTP 503",
    });
    expect(fenceCondition({ conditions: failed ?? [] }, "Processing")?.reason).to.equal(
      "PowerManagementError",
    );
    const aborted = course([
      {
        step: "recovery",
        phase: "running",
        retries: 0,
        message: "node healthy again",
        lastTransitionTime: at(5),
      },
      { step: "recovery", phase: "done", retries: 0, lastTransitionTime: at(20) },
    ]).at(-1);
    expect(summary(aborted ?? [])).to.deep.equal([
      "Processing=False/Finished",
      "FenceSucceeded=False/NotFenced",
      "WorkloadsReleased=False/NotFenced",
    ]);
  });

  it("reasons are single CamelCase words, as metav1.Condition requires", function () {
    const phases = ["new", "running", "done", "error"] as const;
    const steps = ["power-management", "taint", "cleanup", "recovery"] as const;
    for (const step of steps) {
      for (const phase of phases) {
        for (const c of fenceConditions({ step, phase, retries: 0 }, undefined, 2, at(0))) {
          expect(c.reason, `${step}/${phase} ${c.type}`).to.match(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/);
        }
      }
    }
  });
});

describe("the NodeFence CRD declares what the conditions write", function () {
  it("every condition field and observedGeneration (the API server would prune anything else)", function () {
    const crd = parse(readFileSync(deployPath("controller", "crd.yaml"), "utf8")) as {
      spec: { versions: { schema: { openAPIV3Schema: SchemaNode } }[] };
    };
    for (const version of crd.spec.versions) {
      const status = version.schema.openAPIV3Schema.properties?.["status"];
      expect(status?.properties).to.have.property("observedGeneration");
      const conditions = status?.properties?.["conditions"];
      expect(conditions?.["x-kubernetes-list-map-keys"]).to.deep.equal(["type"]);
      const written = fenceConditions(
        { step: "cleanup", phase: "done", retries: 0, fencedAt: at(1), cleanedAt: at(2) },
        undefined,
        7,
        at(3),
      );
      for (const condition of written) {
        expect(Object.keys(conditions?.items?.properties ?? {})).to.include.members(Object.keys(condition));
      }
    }
  });
});

describe("NodeFenceStore writes the conditions with every status", function () {
  let server: Server;
  const patches: { status: FenceStatus }[] = [];
  const urls: string[] = [];
  let kc: k8s.KubeConfig;

  before(async function () {
    server = createServer((req, res) => {
      urls.push(req.url ?? "");
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        const patch = JSON.parse(body) as { status: FenceStatus };
        patches.push(patch);
        // A merge patch's null removes the field: the object returned no longer has it.
        const status = Object.fromEntries(
          Object.entries(patch.status).filter(([, v]) => v !== null),
        ) as unknown as FenceStatus;
        const object: NodeFence = {
          apiVersion: "rekindle.dev/v1alpha1",
          kind: "NodeFence",
          metadata: { name: "worker-1", resourceVersion: String(patches.length + 1), generation: 3 },
          spec: { node: "worker-1" },
          status,
        };
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(object));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: "c",
          server: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
          skipTLSVerify: true,
        },
      ],
      users: [{ name: "u", token: "t" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
  });

  after(function () {
    server.close();
  });

  it("derives them, keeps times across writes, sets observedGeneration, and starts afresh on replace", async function () {
    const store = new NodeFenceStore(kc);
    const fence: NodeFence = {
      apiVersion: "rekindle.dev/v1alpha1",
      kind: "NodeFence",
      metadata: { name: "worker-1", resourceVersion: "1", generation: 3 },
      spec: { node: "worker-1" },
    };
    await store.writeStatus(
      fence,
      { step: "power-management", phase: "new", retries: 0, lastTransitionTime: at(0) },
      true,
    );
    await store.writeStatus(fence, {
      ...(fence.status ?? { step: "power-management", phase: "new", retries: 0 }),
      phase: "running",
      lastTransitionTime: at(2),
    });
    const written = patches.at(-1)?.status;
    expect(written?.observedGeneration).to.equal(3);
    expect(fenceCondition(written, "Processing")).to.deep.include({
      status: "True",
      reason: "PowerManagementRunning",
      lastTransitionTime: at(0),
      observedGeneration: 3,
    });
    expect(fenceCondition(fence.status, "FenceSucceeded")?.reason).to.equal("PowerOffRequested");
    // A later fence on the same object: every condition's time is the new fence's.
    await store.writeStatus(
      fence,
      { step: "power-management", phase: "new", retries: 0, lastTransitionTime: at(100) },
      true,
    );
    const again = patches.at(-1)?.status;
    expect(again?.conditions?.map((c) => c.lastTransitionTime)).to.deep.equal([at(100), at(100), at(100)]);
    expect(patches.at(-1)).to.have.nested.property("status.fencedAt", null);
  });

  it("writes a NodeFence under its own name, also one named other than its node", async function () {
    const store = new NodeFenceStore(kc);
    const handMade: NodeFence = {
      apiVersion: "rekindle.dev/v1alpha1",
      kind: "NodeFence",
      metadata: { name: "by-hand", resourceVersion: "1" },
      spec: { node: "worker-1" },
    };
    await store.writeStatus(handMade, {
      step: "recovery",
      phase: "done",
      retries: 0,
      refused: "named other than its node",
      lastTransitionTime: at(0),
    });
    expect(urls.at(-1)).to.match(/\/nodefences\/by-hand\/status$/);
  });
});

describe("NodeFences by name", function () {
  const fence = (name: string, node: string): NodeFence => ({
    apiVersion: "rekindle.dev/v1alpha1",
    kind: "NodeFence",
    metadata: { name },
    spec: { node },
  });

  it("keeps a node's fence under the node's name; one named otherwise is set apart, never shadowing it", function () {
    const own = fence("worker-1", "worker-1");
    const { byNode, misnamed } = partitionByName([own, fence("by-hand", "worker-1"), fence("x", "worker-2")]);
    expect([...byNode.keys()]).to.deep.equal(["worker-1"]);
    expect(byNode.get("worker-1")).to.equal(own);
    expect(misnamed.map((f) => f.metadata.name)).to.deep.equal(["by-hand", "x"]);
  });

  it("a refused NodeFence says so in its conditions: not processing, nothing fenced or released", function () {
    const conditions = fenceConditions(
      { step: "recovery", phase: "done", retries: 0, refused: "must be named after its node" },
      undefined,
      1,
      at(0),
    );
    expect(summary(conditions)).to.deep.equal([
      "Processing=False/Refused",
      "FenceSucceeded=False/NotFenced",
      "WorkloadsReleased=False/NotFenced",
    ]);
    expect(fenceCondition({ conditions }, "Processing")?.message).to.equal("must be named after its node");
  });
});
