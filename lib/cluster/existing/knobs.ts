// Knobs read, not guessed, on a cluster rekindle did not create: the kubelet's own configuration
// through the API's nodes/proxy `configz` endpoint, the node's Lease duration, its conditions. What
// the API does not show (kube-controller-manager's grace period, the apiserver's default
// tolerations, the eviction rate) comes from the profile (scenario file or --profile): the report
// lists each value with whether it was read, and where, or assumed.
import { errorMessage } from "../../errors.js";
import { k8s } from "../../kube/client.js";
import type { EvictionSettings, TimingProfile } from "../profiles.js";
import type { KnobSource } from "../provider.js";
import { isObject } from "../../util/is-object.js";

export type { KnobSource };

/** What reading the cluster gives the existing provider. */
export interface ReadKnobs {
  profile: TimingProfile;
  eviction: EvictionSettings;
  /** The kubelet's evictionHard thresholds as configz shows them; undefined when not read. */
  evictionHard?: Record<string, string>;
  sources: KnobSource[];
}

/** The API calls knob reading makes (CoreV1Api/CoordinationV1Api through kc have them; tests fake the server). */
export interface KnobApi {
  /** The kubelet's /configz through the API server's node proxy, parsed. */
  configz(node: string): Promise<unknown>;
  leaseDurationSeconds(node: string): Promise<number | undefined>;
  conditions(node: string): Promise<k8s.V1NodeCondition[]>;
}

export function knobApi(kc: k8s.KubeConfig): KnobApi {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
  return {
    async configz(node) {
      const body: unknown = await core.connectGetNodeProxyWithPath({ name: node, path: "configz" });
      return typeof body === "string" ? (JSON.parse(body) as unknown) : body;
    },
    async leaseDurationSeconds(node) {
      const lease = await coordination.readNamespacedLease({ name: node, namespace: "kube-node-lease" });
      return lease.spec?.leaseDurationSeconds;
    },
    async conditions(node) {
      return (await core.readNode({ name: node })).status?.conditions ?? [];
    },
  };
}

/** "1m30s", "300ms", "5m0s" (Go's time.Duration text) in ms; undefined when it is not one. */
export function goDurationMs(text: unknown): number | undefined {
  if (typeof text !== "string" || text === "") return undefined;
  if (text === "0") return 0;
  const units: Record<string, number> = {
    h: 3_600_000,
    m: 60_000,
    s: 1_000,
    ms: 1,
    us: 0.001,
    µs: 0.001,
    ns: 0.000_001,
  };
  let ms = 0;
  let rest = text;
  while (rest !== "") {
    const match = /^(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/.exec(rest);
    if (match === null) return undefined;
    ms += Number(match[1]) * (units[match[2] ?? ""] ?? 0);
    rest = rest.slice(match[0].length);
  }
  return Math.round(ms);
}

interface Reader {
  sources: KnobSource[];
  read(name: string, value: string, from: string): void;
  assume(name: string, value: string, why: string): void;
}

function reader(): Reader {
  const sources: KnobSource[] = [];
  return {
    sources,
    read: (name, value, from) => sources.push({ name, value, source: "read", from }),
    assume: (name, value, why) => sources.push({ name, value, source: "assumed", from: why }),
  };
}

/** A kubelet duration from configz, or the assumed default saying why. */
function kubeletDuration(
  r: Reader,
  config: Record<string, unknown> | undefined,
  key: string,
  fallbackMs: number,
  where: string,
  why: string,
): number {
  const ms = config ? goDurationMs(config[key]) : undefined;
  if (ms !== undefined) {
    r.read(`kubelet.${key}`, `${ms} ms`, where);
    return ms;
  }
  r.assume(
    `kubelet.${key}`,
    `${fallbackMs} ms`,
    config ? `${where} does not set it: the kubelet's default` : why,
  );
  return fallbackMs;
}

/**
 * Reads the knobs of `node` (a worker the run may fault, or any worker): its kubelet's configz,
 * its Lease, its conditions. Nothing here throws: a value that cannot be read is assumed from the
 * profile or upstream's defaults, with the reason.
 */
export async function readExistingKnobs(
  api: KnobApi,
  node: string | undefined,
  profile: TimingProfile,
  upstream: EvictionSettings,
): Promise<ReadKnobs> {
  const r = reader();
  let config: Record<string, unknown> | undefined;
  let why = "no worker node to read it from";
  const where = `/api/v1/nodes/${node ?? "?"}/proxy/configz`;
  if (node !== undefined) {
    try {
      const body = await api.configz(node);
      const kubelet = isObject(body) ? body["kubeletconfig"] : undefined;
      if (isObject(kubelet)) config = kubelet;
      else why = `${where} answered without a kubeletconfig`;
    } catch (error) {
      const denied = /\b403\b|forbidden/i.test(errorMessage(error))
        ? "; reading it needs get on nodes/proxy"
        : "";
      why = `${where} could not be read (${errorMessage(error)})${denied}`;
    }
  }
  const eviction: EvictionSettings = {
    pressureTransitionPeriodMs: kubeletDuration(
      r,
      config,
      "evictionPressureTransitionPeriod",
      upstream.pressureTransitionPeriodMs,
      where,
      why,
    ),
    // Not in the kubelet's configuration: its housekeeping period, fixed at 10 s.
    monitoringIntervalMs: upstream.monitoringIntervalMs,
    statusUpdateIntervalMs: kubeletDuration(
      r,
      config,
      "nodeStatusUpdateFrequency",
      upstream.statusUpdateIntervalMs,
      where,
      why,
    ),
    shutdownGracePeriodMs: kubeletDuration(
      r,
      config,
      "shutdownGracePeriod",
      upstream.shutdownGracePeriodMs,
      where,
      why,
    ),
  };
  r.assume(
    "kubelet.evictionMonitoringInterval",
    `${eviction.monitoringIntervalMs} ms`,
    "the kubelet's housekeeping period (not configurable in its configuration)",
  );
  const hard = config?.["evictionHard"];
  const evictionHard = isObject(hard)
    ? Object.fromEntries(Object.entries(hard).map(([k, v]) => [k, String(v)]))
    : undefined;
  if (evictionHard)
    r.read(
      "kubelet.evictionHard",
      Object.entries(evictionHard)
        .map(([k, v]) => `${k}<${v}`)
        .join(", "),
      where,
    );
  else r.assume("kubelet.evictionHard", "kubelet defaults", config ? `${where} does not set it` : why);
  const lease = await readLease(r, api, node, config);
  const read = { ...profile, nodeLeaseDurationSeconds: lease ?? profile.nodeLeaseDurationSeconds };
  for (const [name, value] of [
    ["nodeMonitorGracePeriodSeconds", profile.nodeMonitorGracePeriodSeconds],
    ["nodeMonitorPeriodSeconds", profile.nodeMonitorPeriodSeconds],
    ["nodeEvictionRate", profile.nodeEvictionRate],
    ["secondaryNodeEvictionRate", profile.secondaryNodeEvictionRate],
    ["unhealthyZoneThreshold", profile.unhealthyZoneThreshold],
    ["largeClusterSizeThreshold", profile.largeClusterSizeThreshold],
    ["defaultNotReadyTolerationSeconds", profile.defaultNotReadyTolerationSeconds],
    ["defaultUnreachableTolerationSeconds", profile.defaultUnreachableTolerationSeconds],
  ] as const)
    r.assume(
      name,
      String(value),
      `profile ${profile.name} (the API does not show the control plane's flags; set them in the scenario file's knobs or --profile)`,
    );
  await readConditions(r, api, node);
  return { profile: read, eviction, ...(evictionHard ? { evictionHard } : {}), sources: r.sources };
}

/** The node's Lease duration: its Lease object, else the kubelet's configz, else the profile's. */
async function readLease(
  r: Reader,
  api: KnobApi,
  node: string | undefined,
  config: Record<string, unknown> | undefined,
): Promise<number | undefined> {
  let why = "no worker node to read it from";
  if (node !== undefined) {
    try {
      const seconds = await api.leaseDurationSeconds(node);
      if (seconds !== undefined && seconds > 0) {
        r.read("nodeLeaseDurationSeconds", String(seconds), `Lease kube-node-lease/${node}`);
        return seconds;
      }
      why = `Lease kube-node-lease/${node} has no leaseDurationSeconds`;
    } catch (error) {
      why = `Lease kube-node-lease/${node} could not be read (${errorMessage(error)})`;
    }
  }
  const fromConfig = config?.["nodeLeaseDurationSeconds"];
  if (typeof fromConfig === "number" && fromConfig > 0) {
    r.read("nodeLeaseDurationSeconds", String(fromConfig), `/api/v1/nodes/${node ?? "?"}/proxy/configz`);
    return fromConfig;
  }
  r.assume("nodeLeaseDurationSeconds", "profile", why);
  return undefined;
}

async function readConditions(r: Reader, api: KnobApi, node: string | undefined): Promise<void> {
  if (node === undefined) return;
  try {
    const conditions = await api.conditions(node);
    const text = conditions.map((c) => `${c.type}=${c.status}`).join(", ");
    r.read(`node ${node} conditions`, text || "none", `Node ${node} status`);
  } catch (error) {
    r.assume(`node ${node} conditions`, "unknown", `Node ${node} could not be read (${errorMessage(error)})`);
  }
}
