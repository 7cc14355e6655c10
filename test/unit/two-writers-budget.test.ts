// The neverTwoWriters budget: its milestone from the writer log's check, its verdict, the writer
// container it adds to a StatefulSet, and the providers that refuse it before anything starts.
import { expect } from "chai";
import { RekindleError } from "../../lib/errors.js";
import { checkBudgets, missedBudgetLine, type BudgetInput } from "../../lib/expect/budgets.js";
import type { k8s } from "../../lib/kube/client.js";
import { twoWriterOverlaps, twoWritersMilestone } from "../../lib/observe/two-writers.js";
import { parseWriterLog } from "../../lib/observe/writer-log.js";
import { providerRefusal } from "../../lib/scenario-file/provider-refusal.js";
import type { ScenarioFile } from "../../lib/scenario-file/types.js";
import { WRITER_CONTAINER, withWriterContainer } from "../../lib/workloads/writer-container.js";

const FAULT_MS = 1_800_000_000_000;

function input(parts: Partial<BudgetInput> = {}): BudgetInput {
  return {
    milestones: [],
    transitions: [],
    faultAtMs: FAULT_MS,
    faultNodes: ["n1"],
    workloads: [{ id: "db", namespace: "ns", matchLabels: { app: "db" }, wanted: 1 }],
    ...parts,
  };
}

const line = (podUid: string, node: string, seq: number, atMs: number) =>
  `${JSON.stringify({ podUid, node, pid: 1, seq, wallUs: (FAULT_MS + atMs) * 1000, monoUs: seq * 100_000 })}\n`;

describe("the neverTwoWriters budget", function () {
  it("marks <id>:two-writers at the first overlap's start, on the node of the writer that made it two", function () {
    // a on n1 until 30.0 s after the fault; b on n2 from 29.8 s: an unfenced node's writer still writing.
    const text = [
      line("a", "n1", 0, 29_700),
      line("b", "n2", 0, 29_800),
      line("a", "n1", 1, 29_900),
      line("b", "n2", 1, 30_000),
    ].join("");
    const milestone = twoWritersMilestone("db", twoWriterOverlaps(parseWriterLog(text)), FAULT_MS);
    expect(milestone).to.deep.equal({ name: "db:two-writers", atMs: 29_800, node: "n2" });
    expect(twoWritersMilestone("db", [], FAULT_MS)).to.equal(undefined);

    const budget = [{ workload: "db", neverTwoWriters: true }];
    const [missed] = checkBudgets(budget, input({ milestones: [milestone!] }));
    expect(missed).to.deep.include({ budget: "neverTwoWriters", passed: false, value: 29_800 });
    expect(missedBudgetLine(missed!)).to.equal(
      "budget missed: db never two writers on its volume at once — measured two writers (n2) at 29.8 s",
    );
    expect(checkBudgets(budget, input())).to.deep.equal([
      {
        workload: "db",
        budget: "neverTwoWriters",
        limit: "never",
        measured: "never",
        passed: true,
        value: null,
      },
    ]);
  });

  it("adds the writer beside the StatefulSet's containers on its ReadWriteOnce claim, identity from the downward API", function () {
    const sts: k8s.V1StatefulSet = {
      metadata: { name: "db" },
      spec: {
        serviceName: "db",
        selector: { matchLabels: { app: "db" } },
        template: { spec: { containers: [{ name: "db", image: "postgres" }] } },
        volumeClaimTemplates: [
          { metadata: { name: "shared" }, spec: { accessModes: ["ReadWriteMany"] } },
          { metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"] } },
        ],
      },
    };
    const out = withWriterContainer(sts, "docker.io/rekindle/writer:src-0123456789");
    expect(sts.spec?.template.spec?.containers, "the input is left as it was").to.have.length(1);
    const containers = out.spec?.template.spec?.containers ?? [];
    expect(containers.map((c) => c.name)).to.deep.equal(["db", WRITER_CONTAINER]);
    const writer = containers[1];
    expect(writer?.imagePullPolicy).to.equal("Never");
    expect(writer?.volumeMounts).to.deep.equal([{ name: "data", mountPath: "/rekindle-writer" }]);
    expect(writer?.args).to.deep.equal(["--log", "/rekindle-writer/writer.log"]);
    expect(writer?.env?.map((e) => [e.name, e.valueFrom?.fieldRef?.fieldPath])).to.deep.equal([
      ["POD_UID", "metadata.uid"],
      ["NODE_NAME", "spec.nodeName"],
    ]);
    // Applied twice, still one writer.
    expect(withWriterContainer(out, "x").spec?.template.spec?.containers).to.have.length(2);

    const noClaim = { ...sts, spec: { ...sts.spec!, volumeClaimTemplates: [] } };
    expect(() => withWriterContainer(noClaim, "x"))
      .to.throw(RekindleError, "StatefulSet db has no ReadWriteOnce volumeClaimTemplate")
      .with.property("code", "INVALID_INPUT");
  });

  it("is refused before anything starts on every provider, naming it and why", function () {
    const file: ScenarioFile = {
      path: "/s/s.yaml",
      name: "s",
      cluster: {},
      workloads: [{ name: "db", source: { kind: "manifests", paths: ["/s/db.yaml"] } }],
      fault: { type: "stop", target: { kind: "workload", workload: "db" } },
      controller: { enabled: true },
      budgets: [{ workload: "db", neverTwoWriters: true }],
      repeat: 1,
      positions: new Map(),
    };
    expect(providerRefusal(file, "sim")).to.deep.equal([
      "budget neverTwoWriters of workload db: provider sim cannot run the writer workload: the sim's pods run no containers (KWOK nodes), so no writer would write and its log would prove nothing; use provider kind",
    ]);
    expect(providerRefusal(file, "existing").join("\n")).to.include(
      "budget neverTwoWriters of workload db: provider existing cannot run the writer workload",
    );
    expect(providerRefusal(file, "kind").join("\n")).to.include("could only pass unchecked");
    expect(
      providerRefusal({ ...file, budgets: [{ workload: "db", neverTwoWriters: false }] }, "sim"),
    ).to.deep.equal([]);
  });
});
