// Preflight: read-only checks that the cluster under test can be timed at all, safe on any
// cluster (the existing provider runs these when it may not touch nodes): every worker's kubelet
// renews its Lease on schedule, and no worker is NotReady.
import { RekindleError } from "../lib/errors.js";
import { k8s, nodeConditionStatus } from "../lib/kube/client.js";
import type { Milestone } from "../lib/observe/milestones.js";
import { defineScenario } from "../lib/scenario/harness.js";
import { leaseRenewMs } from "../lib/scenario/common.js";

export const nodeHeartbeats = defineScenario({
  id: "preflight/node-heartbeats",
  title: "every worker renews its node Lease on schedule (read-only; needs no node access)",
  requires: [],
  expected: (inputs) => [
    inputs.within({
      name: "heartbeats:all-workers",
      after: "fault-injected",
      minMs: 0,
      // Two renewals each: one may land right after the watch starts, the second a full interval later.
      maxMs: 2 * leaseRenewMs(inputs),
      why: `the kubelet renews its Lease every ${leaseRenewMs(inputs) / 1000}s (a quarter of nodeLeaseDurationSeconds)`,
    }),
  ],
  workloads: () => [],
  recoveryOf: [],
  async run(context) {
    const { cluster, kc, steps } = context;
    const workers = await cluster.workerNodes();
    await steps.step(`check ${workers.length} workers are Ready`, async () => {
      const nodes = (await kc.makeApiClient(k8s.CoreV1Api).listNode()).items;
      const notReady = workers.filter(
        (w) => nodeConditionStatus(nodes.find((n) => n.metadata?.name === w) ?? {}, "Ready") !== "True",
      );
      if (notReady.length > 0) {
        throw new RekindleError("PRECONDITION", `workers not Ready: ${notReady.join(", ")}`, {
          hint: "a node that is not Ready cannot be timed; check it with kubectl describe node",
        });
      }
    });
    // Nothing is injected: "fault-injected" marks the start of the observation.
    context.faultStarts(workers);
    await context.awaitMilestone("heartbeats:all-workers");
  },
  ownMilestones: ["heartbeats:all-workers"],
  derive: (transitions, { faultAtMs, faultNodes }) => {
    const renewals = new Map<string, number>();
    for (const t of transitions) {
      if (t.name !== "lease-renewed" || t.atMs < faultAtMs || !t.node || !faultNodes.includes(t.node))
        continue;
      const count = (renewals.get(t.node) ?? 0) + 1;
      renewals.set(t.node, count);
      if (count >= 2 && faultNodes.every((n) => (renewals.get(n) ?? 0) >= 2)) {
        const done: Milestone = { name: "heartbeats:all-workers", atMs: t.atMs - faultAtMs };
        return [done];
      }
    }
    return [];
  },
});

/** The family's scenarios, in the order `rekindle run` runs them. */
export const scenarios = [nodeHeartbeats];
