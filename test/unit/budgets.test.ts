// Budgets (issue 21 item 4) against synthetic runs: each kind met and missed, maxUnavailable as
// pods go and come, evictions, two incarnations of a pod Ready on two nodes, and the verdict lines.
import { expect } from "chai";
import { RekindleError } from "../../lib/errors.js";
import { isPodOf, type BudgetWorkload } from "../../lib/expect/budget-pods.js";
import {
  checkBudgets,
  limitSeconds,
  missedBudgetLines,
  type BudgetInput,
  type BudgetResult,
} from "../../lib/expect/budgets.js";
import type { Milestone } from "../../lib/observe/milestones.js";
import type { Transition, TransitionName } from "../../lib/observe/types.js";
import type { BudgetSpec } from "../../lib/expect/budget-spec.js";

const FAULT = 1_000_000;
const NS = "ns";

/** A pod transition `sinceFault` ms after the fault (negative: before it). */
function pod(
  name: TransitionName,
  sinceFault: number,
  podName: string,
  node: string,
  options: { app?: string; uid?: string; ownerKind?: string; reason?: string; namespace?: string } = {},
): Transition {
  return {
    name,
    atMs: FAULT + sinceFault,
    subject: { kind: "Pod", namespace: options.namespace ?? NS, name: podName, uid: options.uid ?? podName },
    node,
    detail: {
      ownerKind: options.ownerKind ?? "ReplicaSet",
      ownerName: "x",
      app: options.app ?? "web",
      ...(options.reason !== undefined ? { reason: options.reason, phase: "Failed" } : {}),
    },
    source: "watch",
  };
}

function nodeReady(sinceFault: number, node: string, status: "True" | "Unknown" | "False"): Transition {
  return {
    name: "node-condition",
    atMs: FAULT + sinceFault,
    subject: { kind: "Node", name: node },
    node,
    detail: { type: "Ready", status, from: status === "True" ? "Unknown" : "True", reason: "" },
    source: "watch",
  };
}

const web: BudgetWorkload = { id: "web", namespace: NS, matchLabels: { app: "web" }, wanted: 3 };
const db: BudgetWorkload = { id: "db", namespace: NS, matchLabels: { app: "db" }, wanted: 1 };

function input(parts: Partial<BudgetInput> = {}): BudgetInput {
  return {
    milestones: [],
    transitions: [],
    faultAtMs: FAULT,
    faultNodes: ["n1"],
    workloads: [web, db],
    ...parts,
  };
}

const milestone = (name: string, atMs: number): Milestone => ({ name, atMs });

/** Three web pods Ready before the fault, one per node. */
const threeReady = [
  pod("pod-ready", -60_000, "web-a", "n1"),
  pod("pod-ready", -60_000, "web-b", "n2"),
  pod("pod-ready", -60_000, "web-c", "n3"),
];

function only(results: BudgetResult[]): BudgetResult {
  expect(results).to.have.length(1);
  return results[0]!;
}

describe("budgets: recovered and serving within", function () {
  it("met when <id>:recovered came by the limit, missed when later, and 'not recovered' when it never came", function () {
    const budget = [{ workload: "db", recoveredWithinMs: 45_000 }];
    expect(
      only(checkBudgets(budget, input({ milestones: [milestone("db:recovered", 38_200)] }))),
    ).to.deep.equal({
      workload: "db",
      budget: "recoveredWithin",
      limit: "45 s",
      measured: "38.2 s",
      passed: true,
      value: 38_200,
    });
    const late = only(checkBudgets(budget, input({ milestones: [milestone("db:recovered", 52_300)] })));
    expect(late).to.deep.include({ measured: "52.3 s", passed: false });
    expect(missedBudgetLines([late])).to.deep.equal([
      "budget missed: db recovered within 45 s — measured 52.3 s",
    ]);
    const never = only(checkBudgets(budget, input({ milestones: [milestone("web:recovered", 1_000)] })));
    expect(never).to.deep.include({ measured: "not recovered", passed: false, value: null });
  });

  it("servingWithin reads <id>:serving, exactly at the limit is met", function () {
    const budget = [{ workload: "web", servingWithinMs: 60_000 }];
    expect(
      only(checkBudgets(budget, input({ milestones: [milestone("web:serving", 60_000)] }))),
    ).to.deep.include({
      budget: "servingWithin",
      limit: "60 s",
      passed: true,
    });
    const missing = only(checkBudgets(budget, input({ milestones: [milestone("web:recovered", 9_000)] })));
    expect(missingLine(missing)).to.equal("budget missed: web serving within 60 s — measured not serving");
  });

  it("writes limits as a person would", function () {
    expect([
      limitSeconds(45_000),
      limitSeconds(1_500),
      limitSeconds(500),
      limitSeconds(90_000),
    ]).to.deep.equal(["45 s", "1.5 s", "0.5 s", "90 s"]);
  });
});

function missingLine(result: BudgetResult): string {
  return missedBudgetLines([result])[0] ?? "";
}

describe("budgets: maxUnavailable", function () {
  const budget = (n: number) => [{ workload: "web", maxUnavailable: n }];

  it("counts the pods of the lost node unavailable from when the node's Ready leaves True until a replacement is Ready", function () {
    const transitions = [
      ...threeReady,
      nodeReady(20_000, "n1", "Unknown"),
      pod("pod-deletion-requested", 25_000, "web-a", "n1"),
      pod("pod-created", 25_100, "web-d", ""),
      pod("pod-scheduled", 25_200, "web-d", "n2"),
      pod("pod-ready", 31_000, "web-d", "n2"),
    ];
    const met = only(checkBudgets(budget(1), input({ transitions })));
    expect(met).to.deep.include({ limit: "1", measured: "1 at 20.0 s", passed: true, value: 1 });
    expect(only(checkBudgets(budget(0), input({ transitions })))).to.deep.include({ passed: false });
    expect(missingLine(only(checkBudgets(budget(0), input({ transitions }))))).to.equal(
      "budget missed: web at most 0 unavailable — measured 1 at 20.0 s",
    );
  });

  it("reports the most at once as pods go and come, and when it first came to that", function () {
    const transitions = [
      ...threeReady,
      pod("pod-deletion-requested", 5_000, "web-a", "n1"), // 1 down
      pod("pod-ready", 9_000, "web-d", "n2"), // 0 down
      pod("pod-gone", 12_300, "web-b", "n2"), // 1 down
      pod("pod-terminal", 14_000, "web-c", "n3", { reason: "Evicted" }), // 2 down
      pod("pod-ready", 18_000, "web-e", "n2"), // 1 down
      pod("pod-ready", 22_000, "web-f", "n1"), // 0 down
    ];
    expect(only(checkBudgets(budget(1), input({ transitions })))).to.deep.include({
      measured: "2 at 14.0 s",
      passed: false,
      value: 2,
    });
    expect(only(checkBudgets(budget(2), input({ transitions })))).to.deep.include({ passed: true });
  });

  it("counts one instant together: a relist with a pod gone and its replacement Ready is no dip", function () {
    const transitions = [
      ...threeReady,
      pod("pod-gone", 10_000, "web-a", "n1"),
      pod("pod-ready", 10_000, "web-d", "n2"),
    ];
    expect(only(checkBudgets(budget(0), input({ transitions })))).to.deep.include({
      measured: "0",
      passed: true,
    });
  });

  it("a node Ready again does not make its pods Ready: their next pod-ready does", function () {
    const transitions = [
      ...threeReady,
      nodeReady(20_000, "n1", "Unknown"),
      nodeReady(40_000, "n1", "True"),
      pod("pod-gone", 41_000, "web-b", "n2"),
      pod("pod-ready", 43_000, "web-a", "n1"),
    ];
    const result = only(checkBudgets(budget(1), input({ transitions })));
    expect(result).to.deep.include({ measured: "2 at 41.0 s", passed: false });
    // Short of replicas already at the fault: counted from the fault instant.
    const short = only(checkBudgets(budget(0), input({ transitions: threeReady.slice(0, 2) })));
    expect(short).to.deep.include({ measured: "1 at 0.0 s" });
  });

  it("judges only the workload's own pods (namespace and labels), and says so when it saw none", function () {
    const transitions = [
      ...threeReady,
      pod("pod-gone", 5_000, "other", "n2", { app: "db" }),
      pod("pod-gone", 6_000, "web-x", "n2", { namespace: "elsewhere" }),
    ];
    expect(only(checkBudgets(budget(0), input({ transitions })))).to.deep.include({ passed: true });
    const unseen = only(
      checkBudgets([{ workload: "db", maxUnavailable: 0 }], input({ transitions: threeReady })),
    );
    expect(unseen).to.deep.include({ measured: "no pod of it seen", passed: false, value: null });
  });

  it("a selector on a label pod transitions do not carry (only app today) matches no pod", function () {
    const t = threeReady[0]!;
    expect(isPodOf(t, { ...web, matchLabels: { app: "web" } })).to.equal(true);
    expect(isPodOf(t, { ...web, matchLabels: { app: "web", tier: "front" } })).to.equal(false);
    expect(isPodOf(t, { ...web, matchLabels: {} })).to.equal(false);
  });
});

describe("budgets: neverEvicted", function () {
  const budget = [{ workload: "web", neverEvicted: true }];

  it("met when nothing of it was evicted; a deletion before the fault or on a healthy node does not count", function () {
    const transitions = [
      ...threeReady,
      pod("pod-deletion-requested", -5_000, "web-a", "n1"),
      pod("pod-deletion-requested", 8_000, "web-b", "n2"),
    ];
    expect(only(checkBudgets(budget, input({ transitions })))).to.deep.equal({
      workload: "web",
      budget: "neverEvicted",
      limit: "never",
      measured: "never",
      passed: true,
      value: null,
    });
  });

  it("missed by a pod ended Evicted by the kubelet, anywhere", function () {
    const transitions = [...threeReady, pod("pod-terminal", 8_100, "web-c", "n3", { reason: "Evicted" })];
    const result = only(checkBudgets(budget, input({ transitions })));
    expect(result).to.deep.include({ measured: "web-c evicted at 8.1 s", passed: false, value: 8_100 });
    expect(missingLine(result)).to.equal(
      "budget missed: web never evicted — measured web-c evicted at 8.1 s",
    );
  });

  it("missed by a deletion or an end on a node the fault hit, the first one counting", function () {
    const transitions = [
      ...threeReady,
      pod("pod-deletion-requested", 300_000, "web-a", "n1"),
      pod("pod-terminal", 12_000, "web-a", "n1", { reason: "Terminated" }),
    ];
    expect(only(checkBudgets(budget, input({ transitions })))).to.deep.include({
      measured: "web-a ended (Terminated) on n1 at 12.0 s",
      passed: false,
    });
    const deleted = [...threeReady, pod("pod-deletion-requested", 300_000, "web-a", "n1")];
    expect(only(checkBudgets(budget, input({ transitions: deleted })))).to.deep.include({
      measured: "web-a deleted on n1 at 300.0 s",
    });
  });

  it("missed by the recorder's <id>:pod-evicted milestone", function () {
    const result = only(checkBudgets(budget, input({ milestones: [milestone("web:pod-evicted", 4_000)] })));
    expect(result).to.deep.include({ measured: "evicted at 4.0 s", passed: false });
  });
});

describe("budgets: neverReadyOnTwoNodes", function () {
  const budget = [{ workload: "db", neverReadyOnTwoNodes: true }];
  const sts = { app: "db", ownerKind: "StatefulSet" };

  it("missed when a StatefulSet pod's replacement is Ready on another node before the old one ended", function () {
    const transitions = [
      pod("pod-ready", -30_000, "db-0", "n1", { ...sts, uid: "old" }),
      pod("pod-deletion-requested", 20_000, "db-0", "n1", { ...sts, uid: "old" }),
      pod("pod-ready", 26_000, "db-0", "n2", { ...sts, uid: "new" }),
    ];
    const result = only(checkBudgets(budget, input({ transitions })));
    expect(result).to.deep.include({
      measured: "db-0 Ready on n1 and n2 at 26.0 s",
      passed: false,
      value: 26_000,
    });
    expect(missingLine(result)).to.equal(
      "budget missed: db never Ready on two nodes at once — measured db-0 Ready on n1 and n2 at 26.0 s",
    );
  });

  it("met when the old pod was gone first, and for a StatefulSet's distinct pods on distinct nodes", function () {
    const fenced = [
      pod("pod-ready", -30_000, "db-0", "n1", { ...sts, uid: "old" }),
      pod("pod-gone", 20_000, "db-0", "n1", { ...sts, uid: "old" }),
      pod("pod-ready", 26_000, "db-0", "n2", { ...sts, uid: "new" }),
    ];
    expect(only(checkBudgets(budget, input({ transitions: fenced })))).to.deep.include({ passed: true });
    const replicas = [
      pod("pod-ready", -30_000, "db-0", "n1", sts),
      pod("pod-ready", -30_000, "db-1", "n2", sts),
      pod("pod-ready", 5_000, "db-2", "n3", sts),
    ];
    expect(
      only(checkBudgets(budget, input({ transitions: replicas, workloads: [{ ...db, wanted: 3 }] }))),
    ).to.deep.include({ passed: true });
  });

  it("for a workload of one replica, any two of its pods count", function () {
    const transitions = [
      pod("pod-ready", -30_000, "db-abc", "n1", { app: "db" }),
      pod("pod-ready", 26_000, "db-def", "n2", { app: "db" }),
    ];
    expect(only(checkBudgets(budget, input({ transitions })))).to.deep.include({
      measured: "Ready on n1 and n2 at 26.0 s",
      passed: false,
    });
  });

  it("falls back on <id>:duplicate-ready only when no pod of it was seen", function () {
    const milestones = [{ name: "db:duplicate-ready", atMs: 14_000, node: "n2" }];
    expect(only(checkBudgets(budget, input({ milestones })))).to.deep.include({
      measured: "Ready on two nodes (n2) at 14.0 s",
      passed: false,
    });
  });
});

describe("checkBudgets", function () {
  it("checks every budget of every workload in the order written, taking a scenario file's BudgetSpec", function () {
    const specs: BudgetSpec[] = [
      { workload: "db", recoveredWithinMs: 45_000, neverReadyOnTwoNodes: true, neverEvicted: true },
      { workload: "web", maxUnavailable: 1, servingWithinMs: 30_000 },
    ];
    const results = checkBudgets(specs, input({ transitions: threeReady }));
    expect(results.map((r) => `${r.workload} ${r.budget}`)).to.deep.equal([
      "db recoveredWithin",
      "db neverEvicted",
      "db neverReadyOnTwoNodes",
      "web servingWithin",
      "web maxUnavailable",
    ]);
  });

  it("refuses a budget on a workload the scenario has not, naming the ones it has", function () {
    expect(() => checkBudgets([{ workload: "cache", maxUnavailable: 0 }], input())).to.throw(
      RekindleError,
      /"cache"/,
    );
  });
});
