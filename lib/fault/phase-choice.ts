// Choosing where a fault falls in a control-plane loop that decides what follows it. Where a
// scenario's outcome waits for a periodic loop (PodGC's 20 s pass frees the pods of a node tainted
// out-of-service), the time it reports is the loop's phase at the fault as much as anything the
// scenario measures: the same cluster gives pods gone 3 s or 19 s after the taint, and repeated
// runs, each about as long as the last, drift through the phase together (the calibration's
// medians differed by 12.5 s between two clusters running the same kube-controller-manager). A
// scenario that chooses the phase observes the loop's last pass and starts its fault a set time
// after one, so its runs time the mechanism, not the draw. A run with a fault phase spread
// (phase-spread.ts) samples the phase instead, and chooses none.
import type { k8s } from "../kube/client.js";
import { observePodGcPass, POD_GC_PERIOD_MS } from "../kube/podgc-pass.js";
import type { Progress } from "../util/progress.js";
import { sleep } from "../util/time.js";

/** A scenario's choice: its fault comes `faultAfterPassMs` after a pass of `loop`. */
export interface FaultPhaseChoice {
  loop: "PodGC";
  faultAfterPassMs: number;
}

/**
 * The wait from `nowMs` until `faultAfterPassMs` after a pass of a loop that passed at `passAtMs`
 * and every `periodMs` since (the next such time at or after now).
 */
export function phaseWaitMs(
  passAtMs: number,
  periodMs: number,
  faultAfterPassMs: number,
  nowMs: number,
): number {
  const sincePass = (((nowMs - passAtMs - faultAfterPassMs) % periodMs) + periodMs) % periodMs;
  return sincePass === 0 ? 0 : periodMs - sincePass;
}

/** Describes the choice for a report line: "the fault comes 14 s after a PodGC pass (every 20 s)". */
export function describePhaseChoice(choice: FaultPhaseChoice): string {
  return `the fault comes ${choice.faultAfterPassMs / 1000} s after a ${choice.loop} pass (every ${POD_GC_PERIOD_MS / 1000} s)`;
}

/** Observes the loop's pass in `namespace`, then waits until the chosen phase. */
export async function waitForChosenPhase(
  kc: k8s.KubeConfig,
  namespace: string,
  choice: FaultPhaseChoice,
  options: { id: string; progress: Progress; signal?: AbortSignal | undefined },
): Promise<void> {
  const { id, progress, signal } = options;
  progress.info(`${id}: observing a ${choice.loop} pass to choose the fault's phase…`);
  const passAtMs = await observePodGcPass(kc, namespace, signal ? { signal } : {});
  const waitMs = phaseWaitMs(passAtMs, POD_GC_PERIOD_MS, choice.faultAfterPassMs, Date.now());
  progress.info(
    `${id}: waiting ${(waitMs / 1000).toFixed(1)}s before the fault: ${describePhaseChoice(choice)}`,
  );
  await sleep(waitMs, signal);
}
