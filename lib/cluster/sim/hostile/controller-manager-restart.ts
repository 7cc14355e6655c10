// Restarting kube-controller-manager mid-run with other flags: its controllers rebuild their
// state from the API, as after a leader change.
import { RekindleError } from "../../../errors.js";
import { untrackProcess } from "../../../util/cleanup.js";
import { stopDaemon } from "../../../util/daemon.js";
import { controllerManagerSpec } from "../boot/control-plane.js";
import { controllerManagerHealthy, waitHealthy } from "../boot/health.js";
import type { SimSession } from "../boot/session.js";
import { SIM_TIMEOUTS } from "../boot/timeouts.js";

export async function restartSimControllerManager(
  session: SimSession,
  extraFlags: readonly string[],
  signal?: AbortSignal,
): Promise<void> {
  const { state, layout, progress } = session;
  const index = state.components.findIndex((c) => c.name === "kube-controller-manager");
  const old = state.components[index];
  if (!old)
    throw new RekindleError("PRECONDITION", `sim cluster ${state.name} has no kube-controller-manager`);
  await stopDaemon(old, SIM_TIMEOUTS.componentStopGraceMs);
  untrackProcess(old.name);
  const spec = controllerManagerSpec({
    bin: state.binaries,
    layout,
    ports: state.ports,
    profile: session.profile,
  });
  const record = session.spawn({ ...spec, args: [...spec.args, ...extraFlags] }, spec.name);
  state.components[index] = record;
  session.save();
  progress.info(
    `kube-controller-manager restarted${extraFlags.length > 0 ? ` with ${extraFlags.join(" ")}` : " with its usual flags"}`,
  );
  const phase = progress.phase(`starting ${record.name}`);
  try {
    await waitHealthy(record, SIM_TIMEOUTS.controllerReadyMs, signal, controllerManagerHealthy(state));
    phase.end(`healthy (pid ${record.pid})`);
  } catch (error) {
    phase.end("failed");
    throw error;
  }
}
