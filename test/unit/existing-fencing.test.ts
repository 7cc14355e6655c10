// --fence-config on a cluster rekindle did not create (lib/cluster/existing/fencing.ts), against a
// stand-in API server that also answers the webhook fence protocol (the nodes' "BMC"): the
// controller is walled to the allowed nodes, a fenced node is powered on before a revert, and the
// in-cluster controller gets the file, its Secret and its CA in its own namespace.
import { expect } from "chai";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { loadExistingFencing } from "../../lib/cluster/existing/fencing.js";
import { revertsPowerOnFirst } from "../../lib/cluster/existing/controller.js";
import type { ExistingNodeFaults, FaultRails } from "../../lib/cluster/provider.js";
import type { k8s } from "../../lib/kube/client.js";
import { rekindleRejection } from "../support/assertions.js";
import { list, startFakeApiServer, status, type FakeApiServer } from "../support/fake-apiserver.js";

const RAILS: FaultRails = { allowedNodes: ["w1"], maxNodes: 1, chosenBy: "--nodes w1" };

function node(name: string, hostname = name): k8s.V1Node {
  return { metadata: { name, labels: { "kubernetes.io/hostname": hostname } } };
}

describe("existing clusters: --fence-config walls the controller to the allowed nodes", function () {
  let api: FakeApiServer;
  let nodes: k8s.V1Node[] = [];
  const power = new Map<string, "on" | "off">();
  const dir = mkdtempSync(join(tmpdir(), "existing-fencing-"));
  const caFile = join(dir, "ca.pem");
  writeFileSync(caFile, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
  const configFile = (templates: Record<string, unknown>, name = "fence.yaml") => {
    const path = join(dir, name);
    writeFileSync(path, stringify({ templates, defaultTemplate: Object.keys(templates)[0] }));
    return path;
  };
  const webhook = (extra: Record<string, string> = {}) => ({
    driver: "webhook",
    options: { url: api.url, allowHttp: "true", ...extra },
    secretRef: { name: "bmc-token", namespace: "lab" },
  });
  const bodyNode = async (req: import("node:http").IncomingMessage): Promise<string> => {
    let text = "";
    for await (const chunk of req) text += String(chunk);
    return (JSON.parse(text) as { node: string }).node;
  };

  before(async function () {
    api = await startFakeApiServer({
      "GET /api/v1/nodes": () => list("NodeList", nodes),
      "GET /api/v1/namespaces/lab/secrets/bmc-token": () => ({
        body: {
          metadata: { name: "bmc-token" },
          type: "Opaque",
          data: { token: Buffer.from("t0k").toString("base64") },
        },
      }),
      "GET /api/v1/namespaces/lab/secrets/missing": () =>
        status(404, "NotFound", 'secrets "missing" not found'),
      "GET /power-state": (req) => {
        const name = new URL(req.url ?? "", "http://x").searchParams.get("node") ?? "";
        return { body: { state: power.get(name) ?? "on" } };
      },
      "POST /power-on": (req) => {
        void bodyNode(req).then((name) => power.set(name, "on"));
        return { body: {} };
      },
      "GET /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/w1": () => ({
        body: { metadata: { name: "w1" }, spec: { renewTime: new Date().toISOString() } },
      }),
    });
  });

  after(async function () {
    await api.close();
  });

  beforeEach(function () {
    nodes = [
      node("w1"),
      node("w2"),
      { metadata: { name: "cp", labels: { "node-role.kubernetes.io/control-plane": "" } } },
    ];
    power.clear();
  });

  it("names the allowed nodes by hostname to the controller, and refuses to fence any other", async function () {
    const fencing = await loadExistingFencing({
      kc: api.kc,
      path: configFile({ lab: webhook() }),
      rails: RAILS,
    });
    expect(fencing.nodeSelector).to.equal("kubernetes.io/hostname in (w1)");
    expect(fencing.secretNamespace).to.equal("default");
    const refused = await rekindleRejection(
      fencing.driver.powerOff({ node: "w2", options: {}, credentials: {} }),
    );
    expect(refused.message).to.equal(
      "refusing to fence w2: faults on this cluster are allowed only on w1 (--nodes w1)",
    );
    expect(await fencing.driver.powerState({ node: "w1", options: {}, credentials: {} })).to.equal("on");
  });

  it("refuses a node whose hostname label is not its name (the selector could not name it)", async function () {
    nodes = [node("w1", "w1.lab.example"), node("w2")];
    const error = await rekindleRejection(
      loadExistingFencing({ kc: api.kc, path: configFile({ lab: webhook() }), rails: RAILS }),
    );
    expect(error.code).to.equal("PRECONDITION");
    expect(error.message).to.include("w1 carry another value than their name");
  });

  it("checks the allowed nodes' Secrets before anything runs, naming the file's problem", async function () {
    const path = configFile({ lab: { ...webhook(), secretRef: { name: "missing", namespace: "lab" } } });
    const error = await rekindleRejection(loadExistingFencing({ kc: api.kc, path, rails: RAILS }));
    expect(error.code).to.equal("INVALID_INPUT");
    expect(error.message).to.include("node w1").and.include("Secret lab/missing").and.not.include("w2");
  });

  it("refuses two CA files: the in-cluster controller mounts one", async function () {
    writeFileSync(join(dir, "other.pem"), "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n");
    const path = configFile({
      a: webhook({ caFile }),
      b: webhook({ caFile: join(dir, "other.pem") }),
    });
    const error = await rekindleRejection(loadExistingFencing({ kc: api.kc, path, rails: RAILS }));
    expect(error.code).to.equal("INVALID_INPUT");
    expect(error.message).to.include("2 CA files");
  });

  it("gives the in-cluster controller the file with its CA mounted and its Secret copied into its namespace", async function () {
    const fencing = await loadExistingFencing({
      kc: api.kc,
      path: configFile({ lab: webhook({ caFile }) }),
      rails: RAILS,
    });
    const objects = await fencing.userObjects();
    const byKind = (
      kind: string,
      name: string,
    ): { metadata?: { namespace?: string }; data?: Record<string, string> } | undefined =>
      objects.find((o) => o.kind === kind && o.metadata?.name === name);
    expect(byKind("Secret", "bmc-token")?.metadata?.namespace).to.equal("rekindle-system");
    expect(byKind("Secret", "bmc-token")?.data).to.deep.equal({
      token: Buffer.from("t0k").toString("base64"),
    });
    expect(byKind("ConfigMap", "rekindle-bmc-ca")?.data?.["ca.crt"]).to.include("BEGIN CERTIFICATE");
    const fence = parse(byKind("ConfigMap", "rekindle-fencing")?.data?.["fence.yaml"] ?? "") as {
      templates: Record<string, { options: Record<string, string>; secretRef: Record<string, string> }>;
    };
    expect(fence.templates["lab"]?.options["caFile"]).to.equal("/etc/rekindle/bmc-ca/ca.crt");
    expect(fence.templates["lab"]?.secretRef).to.deep.equal({ name: "bmc-token" });
  });

  it("a start powers a fenced node on first; a heal of a node that is off waits for its start", async function () {
    const fencing = await loadExistingFencing({
      kc: api.kc,
      path: configFile({ lab: webhook() }),
      rails: RAILS,
    });
    const calls: string[] = [];
    const say = (what: string) => (n: string) => {
      calls.push(`${what} ${n}: power ${power.get(n) ?? "on"}`);
      return Promise.resolve();
    };
    const faults: ExistingNodeFaults = {
      lifecycle: { stopNode: say("agent stop"), startNode: say("agent start") },
      partition: { partitionNode: say("agent partition"), healNode: say("agent heal") },
      pressure: { applyPressure: say("agent fill"), relievePressure: say("agent relieve") },
    };
    const wrapped = revertsPowerOnFirst(faults, fencing, api.kc);
    // On: each revert goes to the agent at once.
    await wrapped.partition.healNode("w1");
    await wrapped.lifecycle.startNode("w1", { onRunning: () => calls.push("running") });
    // Fenced: the heal waits; the start powers it on, says it runs, then the agent reverts both.
    power.set("w1", "off");
    await wrapped.partition.healNode("w1");
    expect(calls).to.have.length(3);
    await wrapped.lifecycle.startNode("w1", { onRunning: () => calls.push("running") });
    expect(calls).to.deep.equal([
      "agent heal w1: power on",
      "running",
      "agent start w1: power on",
      "running",
      "agent start w1: power on",
      "agent heal w1: power on",
    ]);
  });
});
