// The YAML form of a scenario file as the schema guarantees it once validated (schema.ts): the
// plain data normalize.ts turns into a ScenarioFile. Durations are still strings, paths relative.
import type { EVICTION_SIGNALS, FaultType, OperatorAction } from "./types.js";

type Labels = Record<string, string>;

export interface RawWorkload {
  name: string;
  manifests?: string[];
  kustomize?: string;
  deployed?: { namespace: string; matchLabels: Labels };
  service?: string;
  probe?: { http?: { port: number; path?: string }; tcp?: { port: number } };
}

export interface RawTarget {
  workload?: string;
  matchLabels?: Labels;
  zone?: string;
  count?: number;
}

export interface RawFault {
  type: FaultType;
  target: RawTarget;
  duration?: string;
  stagger?: string;
  operator?: { action: OperatorAction; after: string };
}

export interface RawCluster {
  provider?: "sim" | "kind" | "existing";
  profile?: "default" | "fast" | "large";
  knobs?: Partial<Record<RawKnob, string>> & {
    evictionHard?: Partial<Record<keyof typeof EVICTION_SIGNALS, string>>;
  };
  workers?: number;
  zones?: number;
  podsPerNode?: number;
  kindConfig?: string;
}

export const RAW_KNOBS = [
  "nodeMonitorGracePeriod",
  "nodeMonitorPeriod",
  "nodeLeaseDuration",
  "defaultNotReadyToleration",
  "defaultUnreachableToleration",
  "shutdownGracePeriod",
  "pressureTransitionPeriod",
] as const;
export type RawKnob = (typeof RAW_KNOBS)[number];

export const RAW_CONTROLLER_DURATIONS = [
  "unhealthyAfter",
  "checkInterval",
  "healthyBeforeUnfence",
  "detachGrace",
] as const;

export interface RawController {
  enabled: boolean;
  settings?: Partial<Record<(typeof RAW_CONTROLLER_DURATIONS)[number], string>> & { maxUnhealthy?: string };
  fenceConfig?: string;
}

export interface RawBudget {
  workload: string;
  recoveredWithin?: string;
  servingWithin?: string;
  maxUnavailable?: number;
  neverEvicted?: boolean;
  neverReadyOnTwoNodes?: boolean;
  neverTwoWriters?: boolean;
}

export interface RawScenario {
  apiVersion: string;
  kind: string;
  metadata: { name: string; description?: string };
  spec: {
    cluster?: RawCluster;
    workloads: RawWorkload[];
    fault: RawFault;
    controller?: RawController;
    budgets?: RawBudget[];
    repeat?: number;
  };
}
