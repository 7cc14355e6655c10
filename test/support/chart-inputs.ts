// Synthetic chart inputs for the timeline tests: a 3-node fault as today's reports chart it, and a
// large cluster (300 nodes in 3 zones) whose fault hit many nodes, two of them judged on their own.
import type { WindowCheck } from "../../lib/expect/assert.js";
import type { ChartInput } from "../../lib/report/chart.js";

const PER_NODE = ["last-lease-renewal", "node-ready-unknown", "taint-added:node.kubernetes.io/unreachable"];

/** node-ready-unknown in its window, 9 s after the fault. */
export const READY_UNKNOWN_CHECK: WindowCheck = {
  name: "node-ready-unknown",
  after: "fault-injected",
  minMs: 8_000,
  maxMs: 11_000,
  actualMs: 9_000,
  verdict: "ok",
  why: "grace",
};

/** A milestone that must never happen, and did not. */
export const NEVER_CHECK: WindowCheck = {
  name: "volume-detached-early",
  after: "fault-injected",
  minMs: 0,
  maxMs: null,
  verdict: "ok",
  why: "never",
};

/** Three fault nodes, their own milestones qualified, a zone state, a late, a missing and a forbidden milestone. */
export function threeNodeInput(): ChartInput {
  const nodes = ["worker-1", "worker-2", "worker-3"];
  const milestones = [
    { name: "fault-injected", atMs: 0 },
    { name: "last-lease-renewal", atMs: -3_100 },
    { name: "node-ready-unknown", atMs: 9_000 },
    ...nodes.flatMap((node, i) =>
      PER_NODE.map((base, j) => ({ name: `${base}@${node}`, atMs: -3_100 + i * 700 + j * 6_000, node })),
    ),
    { name: "zone-state:zone-a:PartialDisruption", atMs: 14_500 },
    { name: "deployment:recovered", atMs: 48_000 },
  ].sort((a, b) => a.atMs - b.atMs);
  const checks: WindowCheck[] = [
    READY_UNKNOWN_CHECK,
    {
      name: "deployment:recovered",
      after: "fault-injected",
      minMs: 20_000,
      maxMs: 40_000,
      actualMs: 48_000,
      verdict: "late",
      why: "eviction",
    },
    {
      name: "statefulset:recovered",
      after: "fault-injected",
      minMs: 50_000,
      maxMs: 61_000,
      verdict: "missing",
      why: "toleration",
    },
    NEVER_CHECK,
  ];
  return {
    title: "node-loss/three",
    subtitle: "profile fast, sim, fault on worker-1, worker-2, worker-3",
    milestones,
    checks,
  };
}

/** `worker-<zone letter>-<nnn>`. */
export function workerName(zone: string, i: number): string {
  return `worker-${zone.slice(-1)}-${String(i).padStart(3, "0")}`;
}

/**
 * 300 nodes in zone-a, zone-b, zone-c (100 each). The fault hit 40 nodes of zone-a and 12 of
 * zone-b, each with its own PER_NODE milestones (and its zone); zone-a went Normal then
 * PartialDisruption (a window names that one), zone-b PartialDisruption. Two nodes are judged on
 * their own: expected windows name worker-a-007's Unknown and worker-b-003's taint.
 */
export function largeClusterInput(): ChartInput {
  const faulted = [
    ...Array.from({ length: 40 }, (_, i) => ({ node: workerName("zone-a", i), zone: "zone-a" })),
    ...Array.from({ length: 12 }, (_, i) => ({ node: workerName("zone-b", i), zone: "zone-b" })),
  ];
  const milestones = [
    { name: "fault-injected", atMs: 0 },
    { name: "last-lease-renewal", atMs: -2_000 },
    { name: "node-ready-unknown", atMs: 9_000 },
    ...faulted.flatMap(({ node, zone }, i) =>
      PER_NODE.map((base, j) => ({
        name: `${base}@${node}`,
        atMs: -2_000 + i * 250 + j * 8_000,
        node,
        zone,
      })),
    ),
    { name: "zone-state:zone-a:Normal", atMs: 1_000, zone: "zone-a" },
    { name: "zone-state:zone-a:PartialDisruption", atMs: 15_000, zone: "zone-a" },
    { name: "zone-state:zone-b:PartialDisruption", atMs: 21_000, zone: "zone-b" },
    { name: "judged-taint-1", atMs: 30_000 },
  ].sort((a, b) => a.atMs - b.atMs);
  const checks: WindowCheck[] = [
    {
      name: "node-ready-unknown@worker-a-007",
      after: "fault-injected",
      minMs: 5_000,
      maxMs: 20_000,
      actualMs: 7_750,
      verdict: "ok",
      why: "grace",
    },
    {
      name: "taint-added:node.kubernetes.io/unreachable@worker-b-003",
      after: "fault-injected",
      minMs: 10_000,
      maxMs: 40_000,
      actualMs: 24_750,
      verdict: "ok",
      why: "rate",
    },
    {
      name: "zone-state:zone-a:PartialDisruption",
      after: "fault-injected",
      minMs: 5_000,
      maxMs: 30_000,
      actualMs: 15_000,
      verdict: "ok",
      why: "55 %",
    },
    {
      name: "judged-taint-1",
      after: "zone-state:zone-a:PartialDisruption",
      minMs: 0,
      maxMs: 20_000,
      actualMs: 30_000,
      verdict: "ok",
      why: "secondary rate",
    },
  ];
  return {
    title: "zone-disruption/large",
    subtitle: "profile fast, sim",
    milestones,
    checks,
    zoneSizes: { "zone-a": 100, "zone-b": 100, "zone-c": 100 },
  };
}
