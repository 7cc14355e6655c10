// A scenario file (`rekindle run -f`), as the rest of rekindle sees it once loaded: validated,
// durations in ms, paths absolute. The YAML form (apiVersion rekindle.dev/v1alpha1, kind Scenario)
// is described by docs/scenario.schema.json; load.ts turns one into the other. A workload's budgets
// are the model's type (lib/expect/budget-spec.ts): the model checks them and sits below this layer.
import type { BudgetSpec } from "../expect/budget-spec.js";

export const SCENARIO_API_VERSION = "rekindle.dev/v1alpha1";
export const SCENARIO_KIND = "Scenario";

export const FAULT_TYPES = [
  /** The node stops abruptly (power cut). */
  "stop",
  /** The node is cut off from the control plane for `durationMs`, then healed. */
  "partition",
  /** An orderly shutdown the kubelet sees coming. */
  "graceful-shutdown",
  /** The node's memory runs out for `durationMs` (kubelet eviction by QoS and priority). */
  "memory-pressure",
  /** The node's disk runs out for `durationMs`. */
  "disk-pressure",
] as const;
export type FaultType = (typeof FAULT_TYPES)[number];

/** What an operator does by hand after a node is lost (the reflexes reference 004 describes). */
export const OPERATOR_ACTIONS = [
  /** `kubectl delete pod --force --grace-period=0` on the lost node's pods. */
  "force-delete",
  /** `kubectl drain` of the lost node (PDBs apply). */
  "drain",
  /** The node.kubernetes.io/out-of-service taint, by hand. */
  "out-of-service",
] as const;
export type OperatorAction = (typeof OPERATOR_ACTIONS)[number];

export type TargetSpec =
  /** The node that runs a pod of this workload (the first by pod name). */
  | { kind: "workload"; workload: string }
  /** Worker nodes whose labels match. */
  | { kind: "selector"; matchLabels: Record<string, string> }
  /** `count` workers of the zone (topology.kubernetes.io/zone); default every worker of it. */
  | { kind: "zone"; zone: string; count?: number };

export interface FaultSpec {
  type: FaultType;
  target: TargetSpec;
  /** Partition and pressure: how long the fault lasts before it is lifted. */
  durationMs?: number;
  /** Several nodes: the fault reaches the next node this long after the previous one. Default 0 (at once). */
  staggerMs?: number;
  /** After a stop: what the operator does by hand, and when (ms after the fault). */
  operator?: { action: OperatorAction; afterMs: number };
}

export type WorkloadSource =
  /** Manifest files or directories (*.yaml, *.yml, *.json), applied into the scenario's namespace. */
  | { kind: "manifests"; paths: string[] }
  /** A kustomize directory, built with the cluster's kubectl (`kubectl kustomize`). */
  | { kind: "kustomize"; path: string }
  /** Already deployed (clusters rekindle did not create): found by namespace and label selector. */
  | { kind: "deployed"; namespace: string; matchLabels: Record<string, string> };

export type ProbeSpec = { kind: "http"; port: number; path: string } | { kind: "tcp"; port: number };

export interface WorkloadSpec {
  /** The workload's id in milestones ("<name>:recovered") and budgets: lower-case letters, digits, '-'. */
  name: string;
  source: WorkloadSource;
  /** The Service that fronts it; default: the Services whose selector matches its pods. */
  service?: string;
  /** Recovered also needs this probe, made from inside the cluster, to answer. */
  probe?: ProbeSpec;
}

/** Timing knobs over the profile's; each absent one keeps the profile's value. */
export interface KnobOverrides {
  nodeMonitorGracePeriodMs?: number;
  nodeMonitorPeriodMs?: number;
  nodeLeaseDurationMs?: number;
  defaultNotReadyTolerationMs?: number;
  defaultUnreachableTolerationMs?: number;
  shutdownGracePeriodMs?: number;
  pressureTransitionPeriodMs?: number;
  /**
   * The kubelet's evictionHard thresholds, by kubelet signal name ("200Mi", "10%"). Taken by the
   * format, honoured by no provider yet (plan.ts says why for each): the sim's pressure has no
   * thresholds, kind's kubelet reads them from its kind config.
   */
  evictionHard?: EvictionThresholds;
}

/** The kubelet signals a scenario file may give a threshold for (the ones rekindle's pressure faults use). */
export const EVICTION_SIGNALS = {
  memoryAvailable: "memory.available",
  nodefsAvailable: "nodefs.available",
} as const;
export type EvictionThresholds = Partial<
  Record<(typeof EVICTION_SIGNALS)[keyof typeof EVICTION_SIGNALS], string>
>;

export interface ClusterSpec {
  /** Default: the command line's, else kind when available, else sim. */
  provider?: "sim" | "kind" | "existing";
  /** Default: the command line's, else "default". */
  profile?: "default" | "fast" | "large";
  knobs?: KnobOverrides;
  /** Worker nodes (sim, kind). Default: the provider's (3). */
  workers?: number;
  /** Zones the workers are spread over. Default: the provider's (2). */
  zones?: number;
  /** sim: filler pods on each worker that shares a kwok. Default 0. */
  podsPerNode?: number;
  /** kind: a kind cluster config file (absolute path). */
  kindConfig?: string;
}

export interface ControllerSpec {
  enabled: boolean;
  /** Controller settings over the profile's (unhealthyAfterMs, checkIntervalMs, maxUnhealthy…). */
  settings?: {
    unhealthyAfterMs?: number;
    checkIntervalMs?: number;
    healthyBeforeUnfenceMs?: number;
    detachGraceMs?: number;
    maxUnhealthy?: string;
  };
  /** A fence config file (absolute path), as `rekindle controller --fence-config` takes. */
  fenceConfig?: string;
}

/** Where something was written in the file, for errors after loading. */
export interface SourcePosition {
  file: string;
  line: number;
  column: number;
}

export interface ScenarioFile {
  /** Absolute path of the file it was read from. */
  path: string;
  name: string;
  description?: string;
  cluster: ClusterSpec;
  workloads: WorkloadSpec[];
  fault: FaultSpec;
  controller: ControllerSpec;
  budgets: BudgetSpec[];
  /** Default 1. */
  repeat: number;
  /** Positions of keys by their JSON pointer ("/spec/fault/target"), for errors found after loading. */
  positions: ReadonlyMap<string, SourcePosition>;
}
