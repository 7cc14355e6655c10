// Node loss: a worker stops abruptly under a Deployment and a StatefulSet with an RWO volume.
// baseline: nothing helps (the StatefulSet stays down, by design);
// manual-out-of-service: an operator applies node.kubernetes.io/out-of-service after the loss;
// controller: the bundled recovery controller fences the node and releases its workloads.
import { recordScenarioRun, runContext } from "../lib/run/context.js";
import { scenarioNamespace, skipUnlessSupported } from "../lib/run/suite.js";
import { NODE_LOSS_REQUIRES } from "../lib/scenario/catalogue.js";
import { NODE_LOSS_TITLES, runNodeLossScenario, summaryExpected } from "../lib/scenario/node-loss.js";
import type { NodeLossMode } from "../lib/scenario/node-loss.js";

const MODES: NodeLossMode[] = ["baseline", "manual-out-of-service", "controller"];

describe("node-loss", function () {
  this.timeout(0);
  for (const mode of MODES) {
    it(`node-loss/${mode} — ${NODE_LOSS_TITLES[mode]}`, async function () {
      const id = `node-loss/${mode}`;
      skipUnlessSupported(this, id, NODE_LOSS_REQUIRES);
      const context = runContext();
      const failures: string[] = [];
      for (let i = 1; i <= context.repeat; i++) {
        const result = await runNodeLossScenario({
          target: context.cluster,
          mode,
          namespace: scenarioNamespace(id, i),
          ...context.cluster.latencies,
          controller: { driver: context.cluster.fenceDriver() },
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
