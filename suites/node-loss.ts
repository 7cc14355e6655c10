// Node loss: a worker stops abruptly under a Deployment and a StatefulSet with an RWO volume.
// baseline: nothing helps (the StatefulSet stays down, by design);
// manual-out-of-service: an operator applies node.kubernetes.io/out-of-service after the loss;
// controller: the bundled recovery controller fences the node and releases its workloads.
import { recordScenarioRun, runContext } from "../lib/run/context.js";
import { runNodeLossScenario, summaryExpected } from "../lib/scenario/node-loss.js";
import type { NodeLossMode } from "../lib/scenario/node-loss.js";

const MODES: { mode: NodeLossMode; title: string }[] = [
  {
    mode: "baseline",
    title: "baseline: Deployment recovers after the toleration, the StatefulSet with a volume never does",
  },
  {
    mode: "manual-out-of-service",
    title: "out-of-service taint by hand: PodGC frees the StatefulSet pod, its volume moves",
  },
  {
    mode: "controller",
    title:
      "recovery controller: fence, out-of-service taint, force delete; everything back well within a minute",
  },
];

describe("node-loss", function () {
  this.timeout(0);
  for (const { mode, title } of MODES) {
    it(`node-loss/${mode} — ${title}`, async function () {
      const context = runContext();
      const id = `node-loss/${mode}`;
      const failures: string[] = [];
      for (let i = 1; i <= context.repeat; i++) {
        const result = await runNodeLossScenario({
          target: context.target,
          mode,
          namespace: `node-loss-${mode}-${i}`,
          podStartMs: context.podStartMs,
          attachMs: context.attachMs,
          controller: { driver: context.fenceDriver },
          progress: context.progress,
          signal: context.signal,
        });
        recordScenarioRun(id, result, summaryExpected(result.expected, result.checks), result.chart);
        if (result.outcome === "failed") failures.push(`run ${i}: ${result.error ?? "failed"}`);
      }
      if (failures.length > 0) throw new Error(failures.join("\n\n"));
    });
  }
});
