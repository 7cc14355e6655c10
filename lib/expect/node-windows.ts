// What a scenario does to its node, as the workload model sees it (the fault, the operator, the
// controller, the knobs), and the node's own windows, written once per scenario rather than per
// workload: Unknown and the unreachable taint, the operator's and the controller's marks, the
// graceful shutdown's NotReady, the pressure condition and taint.
import type { EvictionSettings } from "../cluster/profiles.js";
import {
  DRAIN_STARTED_MILESTONE,
  DRAIN_TIMED_OUT_MILESTONE,
  DRAIN_TIMEOUT_MS,
  RELEASED_BY_HAND_MILESTONE,
} from "./by-hand.js";
import {
  earlyDetectionBounds,
  OUT_OF_SERVICE_MILESTONE,
  UNREACHABLE_MILESTONE,
  type ControllerTimingSettings,
  type ExpectedMilestone,
  type ModelKnobs,
} from "./model.js";
import { FAULT, raw, TimelineBuilder, type RawWindow } from "./timeline-builder.js";

/** The scenario file's fault types (lib/scenario-file/types.ts FaultType; kept here, a lower layer). */
export type ModelFault = "stop" | "partition" | "graceful-shutdown" | "memory-pressure" | "disk-pressure";
/** The scenario file's operator actions (OperatorAction). */
export type ModelOperatorAction = "force-delete" | "drain" | "out-of-service";

/** The scenario's mark when a partition heals or a pressure is lifted. */
export const PARTITION_HEALED_MILESTONE = "partition-healed";
export const PRESSURE_RELIEVED_MILESTONE = "pressure-relieved";
/** The controller's first fence anywhere (a node Event). */
export const FENCE_STARTED_MILESTONE = "any-node:event:FenceStarted";
/** The kubelet reports Ready=False "node is shutting down" this soon after a graceful shutdown starts. */
export const SHUTDOWN_NOT_READY_MS = 10_000;

export interface ScenarioSituation {
  fault: ModelFault;
  /** Partition and pressure: how long the fault lasts, in ms. Default: past the scenario's end. */
  durationMs?: number;
  /** After a stop: what the operator does, `afterMs` after the fault (the runner marks it then). */
  operator?: { action: ModelOperatorAction; afterMs: number };
  /**
   * The recovery controller runs with these timings (controllerTiming() in lib/scenario/common.ts;
   * a frozen node's power-off time in fenceMs). Absent: it does not run. With an operator action
   * as well, the workloads' windows follow the controller alone (only the operator's mark is kept).
   */
  controller?: ControllerTimingSettings;
  /** The cluster's timing knobs, with the scenario's slack and the provider's latencies (model.ts knobs()). */
  knobs: ModelKnobs;
  /** The kubelet's eviction and shutdown settings. */
  eviction: EvictionSettings;
  /** kube-controller-manager runs with --disable-force-detach-on-timeout. Default false. */
  forceDetachDisabled?: boolean;
}

/** From the fault to Unknown: [grace − one renewal, grace + one monitor period] (as model.ts). */
function unknownWindow(k: ModelKnobs): RawWindow {
  return raw(
    "node-ready-unknown",
    FAULT,
    k.graceMs - k.renewMs,
    k.graceMs + k.periodMs,
    `lease renewed every ${k.renewMs} ms; --node-monitor-grace-period ${k.graceMs} ms checked every ${k.periodMs} ms`,
  );
}

function unreachableWindow(k: ModelKnobs): RawWindow {
  return raw(
    UNREACHABLE_MILESTONE,
    "node-ready-unknown",
    0,
    k.evictionGapMs,
    `NoExecute tainting, rate-limited to one node per ${k.evictionGapMs} ms per healthy zone`,
  );
}

/** A mark the runner sets itself at a fixed time after the fault (never earlier). */
function mark(name: string, atMs: number, why: string): RawWindow {
  return { ...raw(name, FAULT, atMs, atMs + 1000, why), keepMin: true };
}

/** The controller's detection and fence: the out-of-service taint's bounds since the fault. */
export function controllerTaintBounds(
  s: ScenarioSituation,
  c: ControllerTimingSettings,
): { minMs: number; maxMs: number } {
  // Its clock starts when it sees the last renewal (up to one check after it), and it notices the
  // silence at a check: two check intervals on top of unhealthyAfter at worst (as model.ts). A
  // stopped node that its driver reads off early is judged lost at its first missed renewal.
  const early = s.fault === "stop" ? earlyDetectionBounds(s.knobs.renewMs, c) : undefined;
  if (early !== undefined) return { minMs: early.minMs, maxMs: early.maxMs + c.fenceMs };
  return {
    minMs: Math.max(0, c.unhealthyAfterMs - s.knobs.renewMs),
    maxMs: c.unhealthyAfterMs + 2 * c.checkIntervalMs + c.fenceMs,
  };
}

function controllerTaint(s: ScenarioSituation, c: ControllerTimingSettings): RawWindow {
  const { minMs, maxMs } = controllerTaintBounds(s, c);
  return raw(
    OUT_OF_SERVICE_MILESTONE,
    FAULT,
    minMs,
    maxMs,
    `controller: no renewal seen for ${c.unhealthyAfterMs} ms (checked every ${c.checkIntervalMs} ms), then a confirmed fence (${c.fenceMs} ms)`,
  );
}

function noFence(why: string): RawWindow[] {
  return [
    raw(FENCE_STARTED_MILESTONE, FAULT, 0, null, `no fence anywhere: ${why}`),
    raw(OUT_OF_SERVICE_MILESTONE, FAULT, 0, null, `never tainted out-of-service: ${why}`),
  ];
}

function operatorWindows(s: ScenarioSituation): RawWindow[] {
  const op = s.operator;
  if (op === undefined) return [];
  const at = op.afterMs;
  switch (op.action) {
    case "force-delete":
      return [
        mark(
          RELEASED_BY_HAND_MILESTONE,
          at,
          `the operator force-deletes the lost node's pods ${at} ms after the fault`,
        ),
        raw(
          "volumes-in-use-changed",
          FAULT,
          0,
          null,
          "a dead kubelet's last volumesInUse report stays as it was",
        ),
      ];
    case "drain":
      return [
        mark(DRAIN_STARTED_MILESTONE, at, `the operator drains the lost node ${at} ms after the fault`),
        raw(
          DRAIN_TIMED_OUT_MILESTONE,
          DRAIN_STARTED_MILESTONE,
          DRAIN_TIMEOUT_MS,
          DRAIN_TIMEOUT_MS + 2000,
          `kubectl drain --timeout=${DRAIN_TIMEOUT_MS / 1000}s: no kubelet confirms the evicted pods' deletion`,
        ),
        raw(
          RELEASED_BY_HAND_MILESTONE,
          DRAIN_TIMED_OUT_MILESTONE,
          0,
          1000,
          "the operator drains again with --grace-period=0",
        ),
        raw(
          "volumes-in-use-changed",
          FAULT,
          0,
          null,
          "a dead kubelet's last volumesInUse report stays as it was",
        ),
      ];
    case "out-of-service":
      return [
        mark(
          OUT_OF_SERVICE_MILESTONE,
          at,
          `the operator taints the node out-of-service ${at} ms after the fault`,
        ),
      ];
  }
}

function stopWindows(s: ScenarioSituation): RawWindow[] {
  const k = s.knobs;
  const loss = [unknownWindow(k), unreachableWindow(k)];
  if (s.controller !== undefined) {
    const byHand = operatorWindows(s).filter((w) => w.name !== OUT_OF_SERVICE_MILESTONE);
    return [...loss, controllerTaint(s, s.controller), ...byHand];
  }
  return [...loss, ...operatorWindows(s)];
}

function partitionWindows(s: ScenarioSituation): RawWindow[] {
  const k = s.knobs;
  const d = s.durationMs ?? Number.POSITIVE_INFINITY;
  const out: RawWindow[] = [];
  if (Number.isFinite(d))
    out.push({ ...raw(PARTITION_HEALED_MILESTONE, FAULT, d, d, `healed after ${d} ms`), keepMin: true });
  // Healed with a renewal to spare: the last one before the fault and the first after the heal
  // may each be a renewal interval away.
  if (d + 2 * k.renewMs < k.graceMs) {
    out.push(
      raw(
        "node-ready-unknown",
        FAULT,
        0,
        null,
        `healed ${d} ms in: a Lease renewal reaches the API within --node-monitor-grace-period (${k.graceMs} ms)`,
      ),
      raw(UNREACHABLE_MILESTONE, FAULT, 0, null, "the node never went Unknown"),
    );
  } else if (d > k.graceMs + k.periodMs) {
    out.push(unknownWindow(k), unreachableWindow(k));
  }
  const c = s.controller;
  if (c !== undefined) {
    const taint = controllerTaintBounds(s, c);
    if (d > taint.maxMs) out.push(controllerTaint(s, c));
    else if (d + 2 * s.knobs.renewMs < c.unhealthyAfterMs)
      out.push(...noFence(`healed before the controller's unhealthyAfter (${c.unhealthyAfterMs} ms)`));
  }
  return out;
}

function shutdownWindows(s: ScenarioSituation): RawWindow[] {
  const k = s.knobs;
  return [
    raw(
      "node-not-ready",
      FAULT,
      0,
      SHUTDOWN_NOT_READY_MS,
      'the kubelet reports Ready=False "node is shutting down" before ending pods',
    ),
    // The kubelet renews its Lease until its shutdown ends, and its shutdownGracePeriod bounds
    // the shutdown (both pod groups), so the last renewal may come that much after NotReady; the
    // grace runs from it.
    raw(
      "node-ready-unknown",
      "node-not-ready",
      k.graceMs,
      k.graceMs + s.eviction.shutdownGracePeriodMs + 2 * k.periodMs,
      `the NotReady status was the kubelet's last status; its Lease, renewed until the shutdown ended (within shutdownGracePeriod, ${s.eviction.shutdownGracePeriodMs} ms), goes silent: Unknown after --node-monitor-grace-period (${k.graceMs} ms), seen at a monitor pass`,
    ),
    ...(s.controller ? noFence("a gracefully shut down node releases its workloads itself") : []),
  ];
}

export const PRESSURE_CONDITION = {
  "memory-pressure": "MemoryPressure",
  "disk-pressure": "DiskPressure",
} as const;
export const PRESSURE_TAINT = {
  "memory-pressure": "node.kubernetes.io/memory-pressure",
  "disk-pressure": "node.kubernetes.io/disk-pressure",
} as const;

function pressureWindows(s: ScenarioSituation, fault: "memory-pressure" | "disk-pressure"): RawWindow[] {
  const {
    monitoringIntervalMs: monitor,
    statusUpdateIntervalMs: update,
    pressureTransitionPeriodMs: transition,
  } = s.eviction;
  const period = s.knobs.periodMs;
  const condition = PRESSURE_CONDITION[fault];
  const taint = PRESSURE_TAINT[fault];
  const d = s.durationMs;
  const out: RawWindow[] = [
    raw(
      `node-condition:${condition}:True`,
      FAULT,
      0,
      monitor + update,
      "the eviction manager sees the signal within one monitoring interval; the next status update reports it",
    ),
    raw(
      `taint-added:${taint}`,
      `node-condition:${condition}:True`,
      0,
      period,
      "the node lifecycle controller taints by condition (NoSchedule) at its next pass",
    ),
    ...(s.controller ? noFence("the node is under pressure but reachable: its Lease is fresh") : []),
  ];
  if (d === undefined) return out;
  return [
    ...out,
    {
      ...raw(PRESSURE_RELIEVED_MILESTONE, FAULT, d, d + 1000, `the pressure is lifted after ${d} ms`),
      keepMin: true,
    },
    raw(
      `node-condition:${condition}:False`,
      PRESSURE_RELIEVED_MILESTONE,
      Math.max(0, transition - monitor),
      transition + monitor + update,
      `the condition stays for evictionPressureTransitionPeriod (${transition} ms) after the last pass that saw the signal; the next status update clears it`,
    ),
    raw(
      `taint-removed:${taint}`,
      `node-condition:${condition}:False`,
      0,
      period,
      "the node lifecycle controller lifts the condition's taint",
    ),
  ];
}

/** The node's windows of the scenario, before slack (the workload model anchors on them). */
export function nodeWindowsRaw(s: ScenarioSituation): RawWindow[] {
  switch (s.fault) {
    case "stop":
      return stopWindows(s);
    case "partition":
      return partitionWindows(s);
    case "graceful-shutdown":
      return shutdownWindows(s);
    case "memory-pressure":
    case "disk-pressure":
      return pressureWindows(s, s.fault);
  }
}

/** The node's windows of the scenario, once per scenario (not per workload), widened by the slack. */
export function expectedNodeWindows(s: ScenarioSituation): ExpectedMilestone[] {
  const b = new TimelineBuilder();
  for (const w of nodeWindowsRaw(s)) b.add(w);
  return b.windows(s.knobs.slackMs);
}
