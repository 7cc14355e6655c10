// The node-loss scenarios' expected timeline from the workload model (lib/expect/workload-model.ts),
// fed with the fixture workloads' own manifests as a scenario file's workloads are: one model for
// both. Before a run every fixture pod is taken to be on the lost node (each prefers the db pod's
// node); a run counts what the node holds before the fault and expects that (expectNodeLossReach).
import type { ControllerConfig } from "../controller/config.js";
import { knobs, OUT_OF_SERVICE_MILESTONE, UNREACHABLE_MILESTONE, type ModelKnobs } from "../expect/model.js";
import type { ExpectedMilestone } from "../expect/windows.js";
import { tolerationDefaults, workloadFacts, type WorkloadFacts } from "../expect/workload-facts.js";
import { expectedScenarioWindows, type ScenarioSituation } from "../expect/workload-model.js";
import { nodeLossFixtureObjects, nodeLossPodsOn } from "../workloads/node-loss-fixtures.js";
import { controllerTiming, nodeLossModelInputs } from "./common.js";
import type { ExpectationInputs, ScenarioContext } from "./harness.js";

/** Who releases the lost node's pods: nobody, an operator's out-of-service taint, or the controller. */
export type NodeLossRecovery =
  | { mode: "baseline" }
  | { mode: "manual-out-of-service" }
  | { mode: "controller"; controller: ControllerConfig };

/** Pods of each fixture workload on the lost node, by id; "assumed": all of its pods (before a run). */
export type NodeLossReach = ReadonlyMap<string, number> | "assumed";

/**
 * The fixtures' facts with the cluster's default tolerations. Their Services are left out: the
 * built-in scenarios do not watch them (nodeLossWorkloads names none), so they expect no serving
 * windows and count a workload recovered once its replacements are Ready, as their history does.
 */
export function nodeLossFacts(
  inputs: Pick<ExpectationInputs, "profile" | "volumeAttachRequired">,
): WorkloadFacts[] {
  return nodeLossFixtureObjects().map(({ id, objects }) =>
    workloadFacts(
      id,
      objects.filter((o) => o.kind !== "Service"),
      { ...tolerationDefaults(inputs.profile), volumeAttachRequired: inputs.volumeAttachRequired },
    ),
  );
}

/**
 * When the manual scenario's taint comes, for the model: it taints once the pods' unreachable
 * toleration (the API server's default, as every fixture has) has marked them for deletion, so
 * just past the latest such eviction. Only which mechanism comes first follows from it.
 */
function pastEvictionMs(k: ModelKnobs): number {
  return k.graceMs + k.periodMs + k.evictionGapMs + k.toleranceMs + 2000;
}

/** The scenario as the workload model sees it: a stop, and the recovery's operator or controller. */
export function nodeLossSituation(inputs: ExpectationInputs, recovery: NodeLossRecovery): ScenarioSituation {
  const k = knobs(nodeLossModelInputs(inputs));
  return {
    fault: "stop",
    knobs: k,
    eviction: inputs.eviction,
    // A stop that leaves the power on reads on: no early power read finds the node off.
    ...(recovery.mode === "controller"
      ? {
          controller: {
            ...controllerTiming(recovery.controller, 0, inputs.powerLossNotices),
            ...(inputs.stopLeavesPowerOn === true ? { earlyPowerRead: false } : {}),
          },
        }
      : {}),
    ...(recovery.mode === "manual-out-of-service"
      ? { operator: { action: "out-of-service" as const, afterMs: pastEvictionMs(k) } }
      : {}),
  };
}

/**
 * The model's windows these scenarios do not judge. The taint by hand: the scenario's own step,
 * taken once the pods are marked for deletion rather than at a fixed time (the windows after it
 * anchor on it). With the controller, the node's Unknown and unreachable taint: they come after
 * the grace period, by when the workloads may be back and the scenario done watching.
 */
function unjudged(recovery: NodeLossRecovery): ReadonlySet<string> {
  switch (recovery.mode) {
    case "baseline":
      return new Set();
    case "manual-out-of-service":
      return new Set([OUT_OF_SERVICE_MILESTONE]);
    case "controller":
      return new Set(["node-ready-unknown", UNREACHABLE_MILESTONE]);
  }
}

/** The expected windows of a node-loss scenario for the pods the lost node holds (`reach`). */
export function expectedNodeLossWindows(
  inputs: ExpectationInputs,
  recovery: NodeLossRecovery,
  reach: NodeLossReach = "assumed",
): ExpectedMilestone[] {
  const workloads = nodeLossFacts(inputs).map((facts) => ({
    facts,
    lostPods: reach === "assumed" ? facts.replicas : (reach.get(facts.id) ?? 0),
  }));
  const skip = unjudged(recovery);
  return expectedScenarioWindows(workloads, nodeLossSituation(inputs, recovery)).filter(
    (w) => !skip.has(w.name),
  );
}

/**
 * Counts the fixture pods on the node about to be lost and expects the windows of what it holds,
 * the headline recovery being that of the workloads it holds pods of. Call before the fault.
 */
export async function expectNodeLossReach(
  context: ScenarioContext,
  node: string,
  recovery: NodeLossRecovery,
): Promise<ReadonlyMap<string, number>> {
  const reach = await context.steps.step(`count the workloads' pods on ${node}`, () =>
    nodeLossPodsOn(context.kc, context.namespace, node),
  );
  context.progress.info(`pods on ${node}: ${[...reach].map(([id, n]) => `${id} ${n}`).join(", ")}`);
  context.expectTimeline(
    expectedNodeLossWindows(context.inputs, recovery, reach),
    [...reach].filter(([, n]) => n > 0).map(([id]) => id),
  );
  return reach;
}
