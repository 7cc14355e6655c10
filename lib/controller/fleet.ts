// No mass power-off: reference 003's zone logic applied to fencing. Nodes that go silent together
// are a network event until proven otherwise (a switch failure cuts kubelets off the API server
// while their workloads keep serving), so a lost node that went silent in one event with others of
// its zone is held until node-monitor-grace-period has passed since the last of them went silent,
// and then fenced at the secondary rate. A node lost alone is fenced after unhealthyAfter as
// before, at the fleet-wide rate (the secondary one in a partially disrupted zone). Nothing at all
// is fenced while every zone is fully disrupted. Pure: the controller takes the rate's tokens
// (fence-rate.ts) when a fence really starts.
import { formatDurationMs, type ControllerConfig } from "./config.js";
import type { NodeHealth } from "./detect.js";
import type { FenceRateClass } from "./fence-rate.js";
import type { GuardNode } from "./guard.js";
import type { NodeObservations } from "./observations.js";
import { allZonesDisrupted, zoneState, zoneStates, type ZoneView } from "./zones.js";

export type FleetHoldReason = "AllZonesDisrupted" | "CorrelatedSilence";

export type FleetSettings = Pick<
  ControllerConfig,
  | "nodeMonitorGracePeriodMs"
  | "silenceWindowMs"
  | "checkIntervalMs"
  | "unhealthyAfterMs"
  | "unhealthyZoneThreshold"
>;

interface FleetNode {
  zone: string;
  /** When this controller last saw its Lease renewed (or restarted its clock); nodes with a Lease only. */
  silentSinceAt: number | undefined;
  renewIntervalMs: number | undefined;
  /** Judged lost now. */
  lost: boolean;
  /** Counted as not ready in its zone's state (lost, suspect or being fenced). */
  notReady: boolean;
}

/** The fleet as one pass sees it: zone states and each node's silence. */
export interface FleetView {
  zones: ReadonlyMap<string, ZoneView>;
  allDisrupted: boolean;
  nodes: ReadonlyMap<string, FleetNode>;
  nowMs: number;
}

export type FleetDecision =
  | { allowed: false; reason: FleetHoldReason; message: string }
  | { allowed: true; rate: FenceRateClass; why: string };

export function fleetView(
  guard: readonly GuardNode[],
  health: ReadonlyMap<string, NodeHealth>,
  observations: Pick<NodeObservations, "get">,
  nowMs: number,
  settings: Pick<FleetSettings, "unhealthyZoneThreshold">,
): FleetView {
  const workers = guard.filter((g) => !g.controlPlane);
  const state = (name: string) => health.get(name)?.state;
  const notReady = (g: GuardNode) => g.unhealthy || g.fencing || state(g.name) === "suspect";
  const zones = zoneStates(
    workers.map((g) => ({ zone: g.zone, notReady: notReady(g) })),
    settings.unhealthyZoneThreshold,
  );
  const nodes = new Map<string, FleetNode>();
  for (const g of workers) {
    const observation = observations.get(g.name);
    const hasLease = observation?.renewTime !== undefined;
    nodes.set(g.name, {
      zone: g.zone,
      silentSinceAt: hasLease ? observation.lastSignAt : undefined,
      renewIntervalMs: observation?.renewIntervalMs,
      lost: state(g.name) === "unhealthy",
      notReady: notReady(g),
    });
  }
  return { zones, allDisrupted: allZonesDisrupted(zones), nodes, nowMs };
}

const NONE: ReadonlySet<string> = new Set();

/** The zones' states with `silentWith` counted as not ready too (the view's own when that adds none). */
function zonesWithSilent(
  view: FleetView,
  settings: Pick<FleetSettings, "unhealthyZoneThreshold">,
  silentWith: ReadonlySet<string>,
): ReadonlyMap<string, ZoneView> {
  const added = new Map<string, number>();
  for (const name of silentWith) {
    const peer = view.nodes.get(name);
    if (peer && !peer.notReady) added.set(peer.zone, (added.get(peer.zone) ?? 0) + 1);
  }
  if (added.size === 0) return view.zones;
  return new Map(
    [...view.zones].map(([zone, z]): [string, ZoneView] => {
      const notReady = z.notReady + (added.get(zone) ?? 0);
      return [zone, { ...z, notReady, state: zoneState(notReady, z.total, settings.unhealthyZoneThreshold) }];
    }),
  );
}

/** Last renewals within this long of each other: one event. */
export function silenceWindowMs(node: Pick<FleetNode, "renewIntervalMs">, settings: FleetSettings): number {
  if (settings.silenceWindowMs !== undefined) return settings.silenceWindowMs;
  return (node.renewIntervalMs ?? settings.unhealthyAfterMs / 2) + 2 * settings.checkIntervalMs;
}

/**
 * The other lost nodes of `name`'s zone whose last renewal came within the silence window of its
 * own; `silentWith`: nodes not judged lost yet that went silent with it and missed a renewal
 * (detect.ts, `peersSilentWith`), counted as lost.
 */
export function silentTogether(
  name: string,
  view: FleetView,
  settings: FleetSettings,
  silentWith: ReadonlySet<string> = NONE,
): string[] {
  const node = view.nodes.get(name);
  if (node?.silentSinceAt === undefined) return [];
  const since = node.silentSinceAt;
  const windowMs = silenceWindowMs(node, settings);
  return [...view.nodes]
    .filter(
      ([peer, p]) =>
        peer !== name &&
        (p.lost || silentWith.has(peer)) &&
        p.zone === node.zone &&
        p.silentSinceAt !== undefined &&
        Math.abs(p.silentSinceAt - since) <= windowMs,
    )
    .map(([peer]) => peer);
}

/**
 * May lost node `name`, which the guard allows, be fenced now, and at which rate? `poweredOff`: its
 * driver read it off (early-power.ts): no partition can look like that, so neither a silence shared
 * with others nor the rate holds it; only a fully disrupted fleet does. `silentWith`: as for
 * `silentTogether`, and counted as not ready in their zones' states too.
 */
export function fleetDecision(
  name: string,
  view: FleetView,
  settings: FleetSettings,
  poweredOff = false,
  silentWith: ReadonlySet<string> = NONE,
): FleetDecision {
  const node = view.nodes.get(name);
  const zone = node?.zone ?? "";
  const zones = zonesWithSilent(view, settings, silentWith);
  const zoneView = zones.get(zone);
  if (zones === view.zones ? view.allDisrupted : allZonesDisrupted(zones)) {
    return {
      allowed: false,
      reason: "AllZonesDisrupted",
      message: `every zone is fully disrupted (${[...zones.values()].reduce((n, z) => n + z.notReady, 0)} nodes not ready${zones === view.zones ? "" : " or silent past a renewal"}): the cause is likelier the network than the nodes`,
    };
  }
  if (poweredOff) return { allowed: true, rate: "unmetered", why: "its fence driver reads it off" };
  const peers = silentTogether(name, view, settings, silentWith);
  if (peers.length > 0 && node?.silentSinceAt !== undefined) {
    const lastSilentAt = Math.max(
      ...peers.map((p) => view.nodes.get(p)?.silentSinceAt ?? 0),
      node.silentSinceAt,
    );
    const leftMs = lastSilentAt + settings.nodeMonitorGracePeriodMs - view.nowMs;
    const together = `went silent with ${peers.join(", ")} in zone ${JSON.stringify(zone)} (last renewals within ${formatDurationMs(silenceWindowMs(node, settings))})`;
    if (leftMs > 0) {
      return {
        allowed: false,
        reason: "CorrelatedSilence",
        message: `${together}: a network event until proven otherwise, held until node-monitor-grace-period ${formatDurationMs(settings.nodeMonitorGracePeriodMs)} has passed since the last of them went silent (${Math.ceil(leftMs / 1000)}s more), then fenced at the secondary rate`,
      };
    }
    return { allowed: true, rate: "secondary", why: `${together}, past node-monitor-grace-period` };
  }
  if (zoneView?.state === "PartialDisruption") {
    return {
      allowed: true,
      rate: "secondary",
      why: `zone ${JSON.stringify(zone)} is partially disrupted (${zoneView.notReady} of ${zoneView.total} nodes not ready)`,
    };
  }
  return { allowed: true, rate: "primary", why: "lost alone" };
}
