// What `rekindle sim status` shows: each process of the cluster and whether it still runs.
import { isDaemonRunning } from "../../util/daemon.js";
import { activePause } from "./apiserver-pause.js";
import type { ClockSkew } from "./clock-skew.js";
import type { SimLayout } from "./layout.js";
import type { SimClusterState, SimNodePower } from "./state.js";

export interface SimComponentStatus {
  name: string;
  pid: number;
  running: boolean;
  log: string;
}

export interface SimNodeStatus {
  name: string;
  zone: string;
  power: SimNodePower;
  processRunning: boolean;
  /** Its kubelet's clock skew, when one is set. */
  clock?: ClockSkew;
}

export interface SimClusterStatus {
  name: string;
  runId: string;
  profile: string;
  apiserverUrl: string;
  kubeconfig: string;
  components: SimComponentStatus[];
  nodes: SimNodeStatus[];
  /** When a paused kube-apiserver is due to continue; absent unless paused. */
  apiserverPausedUntil?: string;
}

export function simClusterStatus(state: SimClusterState, layout: SimLayout): SimClusterStatus {
  const pause = activePause(state);
  return {
    name: state.name,
    runId: state.runId,
    profile: state.profile,
    apiserverUrl: state.apiserverUrl,
    kubeconfig: layout.kubeconfig,
    components: state.components.map((c) => ({
      name: c.name,
      pid: c.pid,
      running: isDaemonRunning(c),
      log: c.logPath,
    })),
    nodes: state.nodes.map((n) => ({
      name: n.name,
      zone: n.zone,
      power: n.power,
      processRunning: n.process !== undefined && isDaemonRunning(n.process),
      ...(state.clock?.skews[n.name] ? { clock: state.clock.skews[n.name] } : {}),
    })),
    ...(pause ? { apiserverPausedUntil: pause.until } : {}),
  };
}
