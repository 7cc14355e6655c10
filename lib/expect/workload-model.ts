// Expected windows derived from each workload's own spec (its WorkloadFacts) rather than from the
// fixtures' names: per workload `<id>:…` windows for the scenario's fault, operator and controller,
// beside the node's windows, which are written once per scenario (expectedNodeWindows).
import { expectedNodeWindows, nodeWindowsRaw, type ScenarioSituation } from "./node-windows.js";
import { TimelineBuilder, raw, type RawWindow } from "./timeline-builder.js";
import type { LossContext, WorkloadSituation } from "./workload-context.js";
import type { WorkloadFacts } from "./workload-facts.js";
import {
  gracefulShutdownWindows,
  pressureRanking,
  pressureWindows,
  starvedResource,
} from "./workload-kubelet.js";
import { releaseOnLoss } from "./workload-loss.js";
import { probeWindows } from "./workload-probe.js";
import { neverReplaced, replacer, returnAfterLoss } from "./workload-return.js";
import { WATCH_SKEW_MS, type ExpectedMilestone } from "./windows.js";

export type { WorkloadSituation, PressureRanking } from "./workload-context.js";
export { expectedNodeWindows, type ScenarioSituation } from "./node-windows.js";
export { pressureRanking } from "./workload-kubelet.js";

const UNTOUCHED = "none of its pods was on the faulted node: untouched";

/** No pod on the faulted node: nothing of it is deleted, ended, evicted or replaced. */
function untouched(x: LossContext): void {
  const { b, f, s } = x;
  const first =
    s.fault === "graceful-shutdown"
      ? "pod-terminated"
      : s.fault === "stop" || s.fault === "partition"
        ? "pod-deletion-requested"
        : "pod-evicted";
  b.never(`${f.id}:${first}`, UNTOUCHED);
  // A Job creates pods of its own accord as it makes progress.
  if (f.kind !== "Job") b.never(`${f.id}:replacement-created`, UNTOUCHED);
}

/** A DaemonSet's pod on a lost node: it tolerates the node's taints forever and is never moved. */
function daemonOnLoss(x: LossContext): void {
  const { b, f, s } = x;
  if (s.controller === undefined && s.operator === undefined)
    b.never(
      `${f.id}:pod-deletion-requested`,
      "DaemonSet pods tolerate not-ready and unreachable with no tolerationSeconds",
    );
  else if (s.controller === undefined && s.operator?.action === "drain")
    b.never(`${f.id}:pod-deletion-requested`, "kubectl drain --ignore-daemonsets leaves DaemonSet pods");
  neverReplaced(x);
}

/** Its Service: ready endpoints lost with its pods, back once the replacements are Ready. */
function serviceWindows(x: LossContext): void {
  const { b, f, s } = x;
  if (f.service === undefined) return;
  const id = f.id;
  const lost = `${id}:endpoints-lost`;
  if (s.lostPods === 0) {
    b.never(lost, `${UNTOUCHED}; Service ${f.service} keeps its ready endpoints`);
    return;
  }
  const causes: [string, string][] =
    s.fault === "graceful-shutdown"
      ? [[`${id}:pod-terminated`, "its ended pod's endpoint is not ready"]]
      : s.fault === "stop" || s.fault === "partition"
        ? [
            ["node-ready-unknown", "the node lifecycle controller marks the lost node's pods not Ready"],
            [`${id}:pod-deletion-requested`, "a terminating pod's endpoint is not ready"],
            [`${id}:pod-gone`, "its endpoint goes with the pod"],
          ]
        : [[`${id}:pod-evicted`, "the evicted pod's endpoint goes"]];
  const candidates: RawWindow[] = [];
  let unknown = 0;
  for (const [anchor, why] of causes) {
    const bounds = b.bounds(anchor);
    if (bounds === undefined) unknown++;
    else if (bounds.maxMs !== null)
      candidates.push(raw(lost, anchor, 0, 2000, `${why} (Service ${f.service})`));
  }
  if (candidates.length > 0)
    b.earliest(lost, candidates, `the first of: ${candidates.map((c) => c.why).join("; ")}`);
  else if (unknown === 0) b.never(lost, `its pods keep their ready endpoints in Service ${f.service}`);
  const recovered = b.bounds(`${id}:recovered`);
  if (recovered === undefined) return;
  if (recovered.maxMs === null)
    b.never(
      `${id}:serving`,
      `Service ${f.service} never gets its wanted ready endpoints back: never recovered`,
    );
  else
    b.window(
      `${id}:serving`,
      `${id}:recovered`,
      -WATCH_SKEW_MS,
      2000,
      `the EndpointSlice controller adds the Ready replacements to Service ${f.service} (its watch may deliver up to ${WATCH_SKEW_MS} ms before the pods' own)`,
    );
}

/**
 * The expected windows of one workload in this situation (`situation.lostPods` of its pods on the
 * faulted node), widened by the knobs' slack. The node's own windows are not included (see
 * expectedNodeWindows); these anchor on them.
 */
export function expectedWorkloadTimeline(
  facts: WorkloadFacts,
  situation: WorkloadSituation,
): ExpectedMilestone[] {
  const b = new TimelineBuilder(nodeWindowsRaw(situation));
  const x: LossContext = { b, f: facts, s: situation };
  if (situation.lostPods <= 0) untouched(x);
  else {
    switch (situation.fault) {
      case "stop":
      case "partition":
        if (facts.kind === "DaemonSet") daemonOnLoss(x);
        else returnAfterLoss(x, releaseOnLoss(x));
        break;
      case "graceful-shutdown":
        gracefulShutdownWindows(x);
        break;
      case "memory-pressure":
      case "disk-pressure":
        pressureWindows(x, situation.fault);
        break;
    }
  }
  if (situation.lostPods > 0 && facts.replacement === "after-gone")
    b.never(
      `${facts.id}:duplicate-ready`,
      `${replacer(facts)} creates a replacement only once the old pod is gone or ended: never two Ready at once`,
    );
  serviceWindows(x);
  probeWindows(x);
  return b.windows(situation.knobs.slackMs);
}

/**
 * A whole scenario's windows: the node's once, then every workload's (pressure ranks all their
 * pods on the node together).
 */
export function expectedScenarioWindows(
  workloads: readonly { facts: WorkloadFacts; lostPods: number }[],
  situation: ScenarioSituation,
): ExpectedMilestone[] {
  const ranking =
    situation.fault === "memory-pressure" || situation.fault === "disk-pressure"
      ? pressureRanking(workloads, starvedResource(situation.fault))
      : undefined;
  return [
    ...expectedNodeWindows(situation),
    ...workloads.flatMap(({ facts, lostPods }) =>
      expectedWorkloadTimeline(facts, {
        ...situation,
        lostPods,
        ...(ranking ? { pressureRanking: ranking } : {}),
      }),
    ),
  ];
}
