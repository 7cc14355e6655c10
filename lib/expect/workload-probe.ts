// The windows of a probed workload's in-cluster probe (a scenario file's `probe`, answered by a
// prober pod on a control-plane node: lib/workloads/prober.ts). Only where the model can say: the
// probe fails when the fault took every pod behind the Service and they stop answering at once,
// and answers again once the Service is serving and kube-proxy on the prober's node routes to the
// Ready replacement. A fault that left some pods serving gets no window (the probe goes through the
// Service, which may pick a dead endpoint until it is dropped: it may or may not fail).
import { FAULT } from "./timeline-builder.js";
import type { LossContext } from "./workload-context.js";

/** Probe period (1 s) + its timeout + the kubelet's status write + the watch: when a dead target shows. */
export const PROBE_FAILS_MS = 5000;
/** kube-proxy's sync after the EndpointSlice change + the next probe + the status write. */
export const PROBE_ANSWERS_MS = 5000;

/** Whether the fault stops every lost pod answering at once (a paused node's kernel still accepts TCP connections). */
function stopsAnswering(x: LossContext): boolean {
  const { f, s } = x;
  return s.fault === "stop" || (s.fault === "partition" && f.probe === "http");
}

export function probeWindows(x: LossContext): void {
  const { b, f, s } = x;
  if (f.probe === undefined || f.service === undefined) return;
  const id = f.id;
  if (s.lostPods === 0) {
    b.never(`${id}:probe-failing`, `none of its pods was on the faulted node: its probe keeps answering`);
    return;
  }
  if (s.lostPods < f.replicas || (s.fault !== "stop" && s.fault !== "partition")) return;
  if (stopsAnswering(x))
    b.window(
      `${id}:probe-failing`,
      FAULT,
      0,
      PROBE_FAILS_MS,
      `every pod behind Service ${f.service} was on the faulted node: the next ${f.probe} probe gets no answer`,
    );
  const serving = b.bounds(`${id}:serving`);
  if (serving === undefined) return;
  if (serving.maxMs !== null)
    b.window(
      `${id}:answering`,
      `${id}:serving`,
      0,
      PROBE_ANSWERS_MS,
      `kube-proxy on the prober's node routes Service ${f.service} to the Ready replacement; the next probe answers`,
    );
  else if (s.fault === "stop")
    b.never(`${id}:answering`, `Service ${f.service} never serves again: its probe never answers`);
}
