// Stopping a sim cluster: kwok first, then the components in reverse start order (etcd last),
// then any stray process that carries the run tag. Logs always stay.
import { existsSync, rmSync } from "node:fs";
import { untrackProcess } from "../../../util/cleanup.js";
import { findProcessesByRunTag, stopDaemon } from "../../../util/daemon.js";
import type { SimSession } from "./session.js";
import { kwokProcesses } from "./state.js";
import { SIM_TIMEOUTS } from "./timeouts.js";

/** Stops every process of the cluster; removes etcd data and credentials unless `keepFiles`. */
export async function stopSimProcesses(session: SimSession, options: { keepFiles?: boolean }): Promise<void> {
  session.reload();
  const { state, layout } = session;
  const nodes = kwokProcesses(state);
  await Promise.all(nodes.map((p) => stopDaemon(p, SIM_TIMEOUTS.componentStopGraceMs)));
  for (const component of [...state.components].reverse()) {
    await stopDaemon(component, SIM_TIMEOUTS.componentStopGraceMs);
  }
  for (const pid of findProcessesByRunTag(state.runId)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
  for (const n of state.nodes) {
    untrackProcess(n.name);
    n.process = undefined;
    n.power = "stopped";
  }
  for (const g of state.kwokGroups ?? []) {
    untrackProcess(g.kwok.name);
    g.process = undefined;
  }
  for (const c of state.components) untrackProcess(c.name);
  state.components = [];
  if (existsSync(layout.root)) session.save();
  if (options.keepFiles !== true) {
    rmSync(layout.etcdDataDir, { recursive: true, force: true });
    rmSync(layout.pkiDir, { recursive: true, force: true });
  }
}
