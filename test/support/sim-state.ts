// A minimal sim cluster state for unit tests of what reads and writes the state file.
import type { SimClusterState } from "../../lib/cluster/sim/boot/state.js";

/** The state of a cluster at `root` with `nodes` and, when given, shared kwoks. */
export function simStateAt(
  root: string,
  nodes: SimClusterState["nodes"],
  kwokGroups?: SimClusterState["kwokGroups"],
): SimClusterState {
  return {
    formatVersion: 1,
    name: "unit-test",
    runId: "unit-test-1",
    profile: "fast",
    createdAt: new Date(0).toISOString(),
    root,
    apiserverUrl: "https://127.0.0.1:1",
    binaries: {} as SimClusterState["binaries"],
    ports: {} as SimClusterState["ports"],
    components: [],
    nodes,
    ...(kwokGroups ? { kwokGroups } : {}),
  };
}
