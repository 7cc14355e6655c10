// A new cluster's state directory: refused while a cluster of that name still runs there,
// otherwise emptied and laid out afresh.
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { RekindleError } from "../../../errors.js";
import { isDaemonRunning } from "../../../util/daemon.js";
import type { SimLayout } from "./layout.js";
import { kwokProcesses, readSimState } from "./state.js";

export function prepareFreshRoot(name: string, layout: SimLayout): void {
  if (existsSync(layout.stateFile)) {
    const previous = readSimState(layout.stateFile);
    const alive = [...previous.components, ...kwokProcesses(previous)].filter(isDaemonRunning);
    if (alive.length > 0) {
      throw new RekindleError(
        "CONFLICT",
        `sim cluster "${name}" is already running (${alive.length} processes, state in ${layout.root})`,
        {
          hint: `use it (kubeconfig ${layout.kubeconfig}), stop it with \`rekindle sim down --name ${name}\`, or pick another --name`,
        },
      );
    }
  }
  rmSync(layout.root, { recursive: true, force: true });
  mkdirSync(layout.logsDir, { recursive: true });
  mkdirSync(layout.kwokDir, { recursive: true });
}
