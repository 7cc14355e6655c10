// A schema-valid scenario file's data → ScenarioFile: durations in ms, paths absolute (resolved
// against the file's directory; checks.ts says which are missing), defaults filled in.
import { dirname, resolve } from "node:path";
import { RekindleError } from "../errors.js";
import type { BudgetSpec } from "../expect/budget-spec.js";
import { parseDurationMs } from "../util/duration.js";
import {
  EVICTION_SIGNALS,
  type ClusterSpec,
  type ControllerSpec,
  type EvictionThresholds,
  type FaultSpec,
  type KnobOverrides,
  type ProbeSpec,
  type ScenarioFile,
  type SourcePosition,
  type TargetSpec,
  type WorkloadSource,
  type WorkloadSpec,
} from "./types.js";
import {
  RAW_CONTROLLER_DURATIONS,
  RAW_KNOBS,
  type RawBudget,
  type RawCluster,
  type RawController,
  type RawFault,
  type RawScenario,
  type RawTarget,
  type RawWorkload,
} from "./raw.js";

/** Defaults of the optional sections. */
export const SCENARIO_DEFAULTS = {
  controller: { enabled: false },
  budgets: [],
  repeat: 1,
  cluster: {},
} as const;

/** Durations are schema-checked already; the name only shows if that ever breaks. */
function ms(text: string, what: string): number {
  return parseDurationMs(text, what);
}

export function normalizeScenario(
  raw: RawScenario,
  path: string,
  positions: ReadonlyMap<string, SourcePosition>,
): ScenarioFile {
  const base = dirname(path);
  const spec = raw.spec;
  return {
    path,
    name: raw.metadata.name,
    ...(raw.metadata.description !== undefined ? { description: raw.metadata.description } : {}),
    cluster: spec.cluster === undefined ? { ...SCENARIO_DEFAULTS.cluster } : cluster(spec.cluster, base),
    workloads: spec.workloads.map((workload) => workloadSpec(workload, base)),
    fault: fault(spec.fault),
    controller:
      spec.controller === undefined ? { ...SCENARIO_DEFAULTS.controller } : controller(spec.controller, base),
    budgets: (spec.budgets ?? []).map(budget),
    repeat: spec.repeat ?? SCENARIO_DEFAULTS.repeat,
    positions,
  };
}

function cluster(raw: RawCluster, base: string): ClusterSpec {
  const out: ClusterSpec = {};
  if (raw.provider !== undefined) out.provider = raw.provider;
  if (raw.profile !== undefined) out.profile = raw.profile;
  if (raw.knobs !== undefined) {
    const knobs: KnobOverrides = {};
    for (const knob of RAW_KNOBS) {
      const text = raw.knobs[knob];
      if (text !== undefined) knobs[`${knob}Ms`] = ms(text, `spec.cluster.knobs.${knob}`);
    }
    const hard = raw.knobs.evictionHard;
    if (hard !== undefined) {
      const thresholds: EvictionThresholds = {};
      for (const [key, signal] of Object.entries(EVICTION_SIGNALS)) {
        const value = hard[key as keyof typeof EVICTION_SIGNALS];
        if (value !== undefined) thresholds[signal] = value;
      }
      knobs.evictionHard = thresholds;
    }
    out.knobs = knobs;
  }
  if (raw.workers !== undefined) out.workers = raw.workers;
  if (raw.zones !== undefined) out.zones = raw.zones;
  if (raw.podsPerNode !== undefined) out.podsPerNode = raw.podsPerNode;
  if (raw.kindConfig !== undefined) out.kindConfig = resolve(base, raw.kindConfig);
  return out;
}

function source(raw: RawWorkload, base: string): WorkloadSource {
  if (raw.manifests !== undefined)
    return { kind: "manifests", paths: raw.manifests.map((p) => resolve(base, p)) };
  if (raw.kustomize !== undefined) return { kind: "kustomize", path: resolve(base, raw.kustomize) };
  if (raw.deployed !== undefined)
    return {
      kind: "deployed",
      namespace: raw.deployed.namespace,
      matchLabels: { ...raw.deployed.matchLabels },
    };
  // The schema's oneOf rules this out.
  throw new RekindleError("INTERNAL", `workload ${raw.name} has no source`);
}

function probe(raw: NonNullable<RawWorkload["probe"]>): ProbeSpec {
  if (raw.http !== undefined) return { kind: "http", port: raw.http.port, path: raw.http.path ?? "/" };
  if (raw.tcp !== undefined) return { kind: "tcp", port: raw.tcp.port };
  throw new RekindleError("INTERNAL", "probe has neither http nor tcp");
}

function workloadSpec(raw: RawWorkload, base: string): WorkloadSpec {
  return {
    name: raw.name,
    source: source(raw, base),
    ...(raw.service !== undefined ? { service: raw.service } : {}),
    ...(raw.probe !== undefined ? { probe: probe(raw.probe) } : {}),
  };
}

function target(raw: RawTarget): TargetSpec {
  if (raw.workload !== undefined) return { kind: "workload", workload: raw.workload };
  if (raw.matchLabels !== undefined) return { kind: "selector", matchLabels: { ...raw.matchLabels } };
  if (raw.zone !== undefined)
    return { kind: "zone", zone: raw.zone, ...(raw.count !== undefined ? { count: raw.count } : {}) };
  throw new RekindleError("INTERNAL", "target has neither workload, matchLabels nor zone");
}

function fault(raw: RawFault): FaultSpec {
  return {
    type: raw.type,
    target: target(raw.target),
    ...(raw.duration !== undefined ? { durationMs: ms(raw.duration, "spec.fault.duration") } : {}),
    ...(raw.stagger !== undefined ? { staggerMs: ms(raw.stagger, "spec.fault.stagger") } : {}),
    ...(raw.operator !== undefined
      ? {
          operator: {
            action: raw.operator.action,
            afterMs: ms(raw.operator.after, "spec.fault.operator.after"),
          },
        }
      : {}),
  };
}

function controller(raw: RawController, base: string): ControllerSpec {
  const out: ControllerSpec = { enabled: raw.enabled };
  if (raw.settings !== undefined) {
    const settings: NonNullable<ControllerSpec["settings"]> = {};
    for (const key of RAW_CONTROLLER_DURATIONS) {
      const text = raw.settings[key];
      if (text !== undefined) settings[`${key}Ms`] = ms(text, `spec.controller.settings.${key}`);
    }
    if (raw.settings.maxUnhealthy !== undefined) settings.maxUnhealthy = raw.settings.maxUnhealthy;
    out.settings = settings;
  }
  if (raw.fenceConfig !== undefined) out.fenceConfig = resolve(base, raw.fenceConfig);
  return out;
}

function budget(raw: RawBudget): BudgetSpec {
  const out: BudgetSpec = { workload: raw.workload };
  if (raw.recoveredWithin !== undefined) out.recoveredWithinMs = ms(raw.recoveredWithin, "recoveredWithin");
  if (raw.servingWithin !== undefined) out.servingWithinMs = ms(raw.servingWithin, "servingWithin");
  if (raw.maxUnavailable !== undefined) out.maxUnavailable = raw.maxUnavailable;
  if (raw.neverEvicted !== undefined) out.neverEvicted = raw.neverEvicted;
  if (raw.neverReadyOnTwoNodes !== undefined) out.neverReadyOnTwoNodes = raw.neverReadyOnTwoNodes;
  if (raw.neverTwoWriters !== undefined) out.neverTwoWriters = raw.neverTwoWriters;
  return out;
}
