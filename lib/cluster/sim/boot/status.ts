// What `rekindle sim status` shows: each process of the cluster and whether it still runs.
import { isDaemonRunning } from "../../../util/daemon.js";
import { activePause } from "../hostile/apiserver-pause.js";
import type { ClockSkew } from "../hostile/clock-skew.js";
import type { SimLayout } from "./layout.js";
import type { SimClusterState, SimNodePower, SimNodeState } from "./state.js";

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
  /** Its own kwok runs, or (a fleet node not stopped) its shared kwok runs: the machine is "on". */
  processRunning: boolean;
  /** A fleet node's shared kwok group. */
  group?: string;
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
  /** The shared kwoks (absent: every node has its own). */
  kwokGroups?: SimComponentStatus[];
  /** When a paused kube-apiserver is due to continue; absent unless paused. */
  apiserverPausedUntil?: string;
}

export function simClusterStatus(state: SimClusterState, layout: SimLayout): SimClusterStatus {
  const pause = activePause(state);
  const processRunning = nodeProcessRunningIn(state);
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
      processRunning: processRunning(n),
      ...(n.group === undefined ? {} : { group: n.group }),
      ...(state.clock?.skews[n.name] ? { clock: state.clock.skews[n.name] } : {}),
    })),
    ...(state.kwokGroups
      ? {
          kwokGroups: state.kwokGroups.map((g) => ({
            name: g.kwok.name,
            pid: g.process?.pid ?? 0,
            running: g.process !== undefined && isDaemonRunning(g.process),
            log: g.kwok.logPath,
          })),
        }
      : {}),
    ...(pause ? { apiserverPausedUntil: pause.until } : {}),
  };
}

/** Whether the kwok that plays the node runs (a stopped fleet node's shared kwok plays it no more). */
export function nodeProcessRunning(
  state: Pick<SimClusterState, "kwokGroups">,
  node: Pick<SimNodeState, "group" | "process" | "power">,
): boolean {
  return nodeProcessRunningIn(state)(node);
}

/**
 * nodeProcessRunning for many nodes of one state: each shared kwok's process is looked at once per
 * walk, not once per node (at 1000 nodes that was 1000 reads of /proc, ~45 ms, for each walk).
 */
export function nodeProcessRunningIn(
  state: Pick<SimClusterState, "kwokGroups">,
): (node: Pick<SimNodeState, "group" | "process" | "power">) => boolean {
  const groups = new Map<string, boolean>();
  return (node) => {
    if (node.group === undefined) return node.process !== undefined && isDaemonRunning(node.process);
    if (node.power === "stopped") return false;
    let running = groups.get(node.group);
    if (running === undefined) {
      const group = state.kwokGroups?.find((g) => g.name === node.group);
      running = group?.process !== undefined && isDaemonRunning(group.process);
      groups.set(node.group, running);
    }
    return running;
  };
}
