// The persisted state of a sim cluster, so a later CLI call (`sim node stop`, `sim down`) can act
// on processes an earlier one started.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { RekindleError } from "../../../errors.js";
import type { DaemonRecord, DaemonSpec } from "../../../util/daemon.js";
import type { TimingProfileName } from "../../profiles.js";
import type { SimBinaries } from "../../../build/sim-binaries.js";
import type { ClockSkew } from "../hostile/clock-skew.js";
import type { ControlPlanePorts } from "./control-plane.js";

/**
 * running: kwok plays it; stopped: the node is lost (its own kwok killed, or its shared kwok's label
 * taken away); partitioned: its own kwok SIGSTOPped, or its shared kwok's label taken away.
 */
export type SimNodePower = "running" | "stopped" | "partitioned";

export interface SimNodeState {
  name: string;
  zone: string;
  /** How to start this node's own kwok again; absent for a fleet node (see `group`). */
  kwok?: DaemonSpec;
  /** Its own kwok; always undefined for a fleet node. */
  process: DaemonRecord | undefined;
  power: SimNodePower;
  /** A fleet node: the shared kwok group (kubelet/kwok-groups.ts) that plays it while it carries the label. */
  group?: string;
  /** Its index in the cluster (addresses.ts); absent in state written before fleets. */
  index?: number;
}

/** A kwok shared by the fleet nodes of one zone (or of a chunk of one). */
export interface SimKwokGroupState {
  name: string;
  zone: string;
  kwok: DaemonSpec;
  process: DaemonRecord | undefined;
}

export interface SimClusterState {
  formatVersion: 1;
  name: string;
  /** Value of the rekindle.dev/run label and REKINDLE_RUN env of everything this cluster started. */
  runId: string;
  profile: TimingProfileName;
  createdAt: string;
  root: string;
  apiserverUrl: string;
  binaries: SimBinaries;
  ports: ControlPlanePorts;
  /** Control-plane and helper processes by name, in start order. */
  components: DaemonRecord[];
  nodes: SimNodeState[];
  /** Shared kwoks (absent: every node has its own). */
  kwokGroups?: SimKwokGroupState[];
  /** Skewed kubelet clocks, by node (absent: none ever set). The webhook configuration is the truth. */
  clock?: SimClockState;
  /** Set while kube-apiserver is SIGSTOPped (`sim apiserver pause`). */
  apiserverPause?: SimApiserverPause;
}

export interface SimClockState {
  /** Port of the sim-clock-webhook component on 127.0.0.1. */
  webhookPort: number;
  skews: Record<string, ClockSkew>;
}

export interface SimApiserverPause {
  /** When the pause is meant to end (ISO 8601). */
  until: string;
  /** A detached process that continues the apiserver shortly after `until` if its holder died. */
  backstop: DaemonRecord | undefined;
}

export function readSimState(stateFile: string): SimClusterState {
  let text: string;
  try {
    text = readFileSync(stateFile, "utf8");
  } catch (error) {
    throw new RekindleError("NOT_FOUND", `no sim cluster state at ${stateFile}`, { cause: error });
  }
  const state = JSON.parse(text) as { formatVersion?: unknown };
  if (state.formatVersion !== 1) {
    throw new RekindleError(
      "PRECONDITION",
      `${stateFile} has state format ${String(state.formatVersion)}; this rekindle reads 1`,
    );
  }
  return state as SimClusterState;
}

/** Atomic write: a crash mid-write never leaves a torn state file. */
export function writeSimState(stateFile: string, state: SimClusterState): void {
  const temp = `${stateFile}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(state, null, 2));
  renameSync(temp, stateFile);
}

/** Every kwok process the state records as started: the nodes' own and the shared ones. */
export function kwokProcesses(state: Pick<SimClusterState, "nodes" | "kwokGroups">): DaemonRecord[] {
  return [
    ...state.nodes.flatMap((n) => (n.process ? [n.process] : [])),
    ...(state.kwokGroups ?? []).flatMap((g) => (g.process ? [g.process] : [])),
  ];
}
