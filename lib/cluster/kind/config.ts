// Renders the kind cluster config for a timing profile: kind-config.yaml (the default profile) with
// the profile's knobs written into its kubeadm patches, everything else kept. Also reads back the
// kubelet settings the provider needs (eviction thresholds, transition period, shutdown grace).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse, parseDocument, stringify, type Document } from "yaml";
import { RekindleError } from "../../errors.js";
import { PROJECT_ROOT } from "../../util/project-files.js";
import type { TimingProfile } from "../profiles.js";
import { parseGoDuration } from "./quantity.js";

/** The repo's kind config: 1 control plane, 3 workers, the default profile's knobs. */
export const DEFAULT_KIND_CONFIG = join(PROJECT_ROOT, "kind-config.yaml");

const KIND_API_VERSION = "kind.x-k8s.io/v1alpha4";
/** Kubelet defaults, used when the config leaves a setting out. */
const KUBELET_DEFAULT_PRESSURE_TRANSITION = "5m";
const KUBELET_DEFAULT_SHUTDOWN_GRACE = "0s";
const KUBELET_DEFAULT_STATUS_UPDATE = "10s";

interface KindNodeConfig {
  role?: unknown;
  kubeadmConfigPatches?: unknown;
  [key: string]: unknown;
}

interface KindClusterConfig {
  kind?: unknown;
  apiVersion?: unknown;
  name?: unknown;
  nodes?: unknown;
  kubeadmConfigPatches?: unknown;
  [key: string]: unknown;
}

/** The kubelet settings of the cluster's workers, as rendered. */
export interface KindKubeletSettings {
  /** evictionHard as written, e.g. { "memory.available": "200Mi", "nodefs.available": "10%" }. */
  evictionHard: Readonly<Record<string, string>>;
  pressureTransitionPeriodMs: number;
  statusUpdateIntervalMs: number;
  shutdownGracePeriodMs: number;
  nodeLeaseDurationSeconds: number | undefined;
}

export interface RenderedKindConfig {
  profile: string;
  /** The YAML to hand to `kind create cluster --config`. */
  text: string;
  kubelet: KindKubeletSettings;
  workers: number;
}

/** The flags each kubeadm component gets for a profile (values as kubeadm wants them: strings). */
export function profileFlags(profile: TimingProfile): {
  controllerManager: Record<string, string>;
  apiServer: Record<string, string>;
} {
  return {
    controllerManager: {
      "node-monitor-grace-period": `${profile.nodeMonitorGracePeriodSeconds}s`,
      "node-monitor-period": `${profile.nodeMonitorPeriodSeconds}s`,
      "node-eviction-rate": String(profile.nodeEvictionRate),
      "secondary-node-eviction-rate": String(profile.secondaryNodeEvictionRate),
      "unhealthy-zone-threshold": String(profile.unhealthyZoneThreshold),
      "large-cluster-size-threshold": String(profile.largeClusterSizeThreshold),
    },
    apiServer: {
      "default-not-ready-toleration-seconds": String(profile.defaultNotReadyTolerationSeconds),
      "default-unreachable-toleration-seconds": String(profile.defaultUnreachableTolerationSeconds),
    },
  };
}

function invalidConfig(source: string, problem: string): RekindleError {
  return new RekindleError("INVALID_INPUT", `kind config ${source}: ${problem}`, {
    hint: `a kind.x-k8s.io/v1alpha4 Cluster config like ${DEFAULT_KIND_CONFIG}`,
    details: { source },
  });
}

function patchList(value: unknown, source: string, where: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((p): p is string => typeof p === "string")) {
    throw invalidConfig(source, `${where}.kubeadmConfigPatches must be a list of YAML strings`);
  }
  return value;
}

function patchKind(patch: string): unknown {
  const parsed: unknown = parse(patch);
  return typeof parsed === "object" && parsed !== null ? (parsed as { kind?: unknown }).kind : undefined;
}

/** Sets kubeadm extraArgs in either form: a map (v1beta3) or a name/value list (v1beta4). */
function setExtraArgs(doc: Document, component: string, flags: Record<string, string>): void {
  const json = doc.toJS() as Record<string, unknown> | null;
  const section = json?.[component];
  const extraArgs =
    typeof section === "object" && section !== null
      ? (section as { extraArgs?: unknown }).extraArgs
      : undefined;
  if (Array.isArray(extraArgs)) {
    const entries = extraArgs.filter(
      (e): e is { name: string; value: string } => typeof e === "object" && e !== null && "name" in e,
    );
    for (const [name, value] of Object.entries(flags)) {
      const found = entries.find((e) => e.name === name);
      if (found) found.value = value;
      else entries.push({ name, value });
    }
    doc.setIn([component, "extraArgs"], doc.createNode(entries));
    return;
  }
  for (const [name, value] of Object.entries(flags)) doc.setIn([component, "extraArgs", name], value);
}

function renderPatch(patch: string, profile: TimingProfile): string {
  const kind = patchKind(patch);
  if (kind !== "ClusterConfiguration" && kind !== "KubeletConfiguration") return patch;
  const doc = parseDocument(patch);
  if (kind === "ClusterConfiguration") {
    const flags = profileFlags(profile);
    setExtraArgs(doc, "controllerManager", flags.controllerManager);
    setExtraArgs(doc, "apiServer", flags.apiServer);
  } else {
    doc.set("nodeLeaseDurationSeconds", profile.nodeLeaseDurationSeconds);
  }
  return doc.toString();
}

/**
 * kind-config.yaml text with `profile`'s knobs substituted: controller-manager node-monitor-*,
 * the eviction rates and the zone thresholds, apiserver default-*-toleration-seconds, kubelet nodeLeaseDurationSeconds.
 * A config that has no ClusterConfiguration or KubeletConfiguration patch gets a cluster-wide one.
 */
export function renderKindConfig(
  sourceText: string,
  profile: TimingProfile,
  options: { name?: string; source?: string } = {},
): RenderedKindConfig {
  const source = options.source ?? "(text)";
  let config: KindClusterConfig;
  try {
    config = parse(sourceText) as KindClusterConfig;
  } catch (error) {
    throw invalidConfig(source, `not valid YAML (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof config !== "object" || (config as unknown) === null || config.kind !== "Cluster") {
    throw invalidConfig(source, `kind must be "Cluster"`);
  }
  if (config.apiVersion !== KIND_API_VERSION) {
    throw invalidConfig(
      source,
      `apiVersion must be ${KIND_API_VERSION}, got ${JSON.stringify(config.apiVersion)}`,
    );
  }
  const nodes = config.nodes ?? [{ role: "control-plane" }];
  if (!Array.isArray(nodes)) throw invalidConfig(source, "nodes must be a list");

  const seen = new Set<unknown>();
  const render = (patches: string[]): string[] =>
    patches.map((patch) => {
      seen.add(patchKind(patch));
      return renderPatch(patch, profile);
    });

  // New arrays per node: YAML aliases in the source (one patch list shared by every worker)
  // become plain copies, which kind reads the same way.
  const renderedNodes = (nodes as KindNodeConfig[]).map((node, index) => {
    const patches = patchList(node.kubeadmConfigPatches, source, `nodes[${index}]`);
    return patches.length === 0 ? { ...node } : { ...node, kubeadmConfigPatches: render(patches) };
  });
  const clusterPatches = render(patchList(config.kubeadmConfigPatches, source, "cluster"));
  // A config without these patches still gets the profile's knobs, cluster-wide.
  for (const kind of ["ClusterConfiguration", "KubeletConfiguration"]) {
    if (!seen.has(kind)) clusterPatches.push(renderPatch(`kind: ${kind}\n`, profile));
  }

  const rendered: KindClusterConfig = {
    ...config,
    ...(options.name !== undefined ? { name: options.name } : {}),
    nodes: renderedNodes,
    ...(clusterPatches.length > 0 ? { kubeadmConfigPatches: clusterPatches } : {}),
  };
  const header = `# Rendered by rekindle from ${source} for timing profile "${profile.name}". Do not edit.\n`;
  const text = header + stringify(rendered, { aliasDuplicateObjects: false, lineWidth: 0 });
  return {
    profile: profile.name,
    text,
    kubelet: kubeletSettings(rendered, source),
    workers: renderedNodes.filter((n) => n.role === "worker").length,
  };
}

/** Kubelet settings of the first worker (or the only node): cluster-wide patches, then its own. */
export function kubeletSettings(config: KindClusterConfig, source = "(text)"): KindKubeletSettings {
  const nodes = Array.isArray(config.nodes) ? (config.nodes as KindNodeConfig[]) : [];
  const node = nodes.find((n) => n.role === "worker") ?? nodes[0];
  const patches = [
    ...patchList(config.kubeadmConfigPatches, source, "cluster"),
    ...patchList(node?.kubeadmConfigPatches, source, "worker"),
  ];
  const merged: Record<string, unknown> = {};
  const evictionHard: Record<string, string> = {};
  for (const patch of patches) {
    const parsed: unknown = parse(patch);
    if (typeof parsed !== "object" || parsed === null) continue;
    const kubelet = parsed as Record<string, unknown>;
    if (kubelet["kind"] !== "KubeletConfiguration") continue;
    Object.assign(merged, kubelet);
    const hard = kubelet["evictionHard"];
    if (typeof hard === "object" && hard !== null) {
      for (const [signal, value] of Object.entries(hard)) evictionHard[signal] = String(value);
    }
  }
  const duration = (key: string, fallback: string): number => {
    const value = merged[key];
    return parseGoDuration(typeof value === "string" ? value : fallback);
  };
  const lease = merged["nodeLeaseDurationSeconds"];
  return {
    evictionHard,
    pressureTransitionPeriodMs: duration(
      "evictionPressureTransitionPeriod",
      KUBELET_DEFAULT_PRESSURE_TRANSITION,
    ),
    statusUpdateIntervalMs: duration("nodeStatusUpdateFrequency", KUBELET_DEFAULT_STATUS_UPDATE),
    shutdownGracePeriodMs: duration("shutdownGracePeriod", KUBELET_DEFAULT_SHUTDOWN_GRACE),
    nodeLeaseDurationSeconds: typeof lease === "number" ? lease : undefined,
  };
}

/** Writes the rendered config to `<dir>/kind-config.<profile>.yaml` and returns its path. */
export function writeKindConfig(rendered: RenderedKindConfig, dir: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `kind-config.${rendered.profile}.yaml`);
  writeFileSync(path, rendered.text);
  return path;
}
