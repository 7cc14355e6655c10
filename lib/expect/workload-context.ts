// What every part of the workload model works on: the workload's facts, the scenario's situation
// with how many of its pods the fault took, and the timeline being built.
import type { ScenarioSituation } from "./node-windows.js";
import type { TimelineBuilder } from "./timeline-builder.js";
import type { WorkloadFacts } from "./workload-facts.js";

/** One scenario pod in the kubelet's eviction order under pressure, with its group of equals. */
export interface RankedPod {
  id: string;
  /** Pods of one group rank equal: the kubelet may take them in any order. */
  group: number;
}

/** The kubelet's eviction order over every scenario pod on the pressured node (pressureRanking()). */
export interface PressureRanking {
  /** Evictable pods, first evicted first. */
  order: readonly RankedPod[];
  /** Workloads whose pods are critical: never evicted. */
  critical: readonly string[];
}

export interface WorkloadSituation extends ScenarioSituation {
  /** How many of its pods were on the faulted node(s) when the fault began; 0: untouched. */
  lostPods: number;
  /** Pressure: the order over all the scenario's pods on the node. Default: this workload's pods alone. */
  pressureRanking?: PressureRanking;
}

export interface LossContext {
  b: TimelineBuilder;
  f: WorkloadFacts;
  s: WorkloadSituation;
}
