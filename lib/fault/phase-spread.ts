// Spreading repeated runs' faults over the kubelets' cadences. Repeated runs of one scenario last
// about as long as each other, so without a random wait their faults fall at nearly the same phase
// of every kubelet's 10 s status writes and Lease renewals: a repeat count then samples one phase,
// not the field's spread (bench:recovery's five runs on one sim cluster: the new node's mount
// waited 8.2-8.5 s in one session, 1.1-3.7 s in the next). The wait comes right before the first
// fault (FaultInjector's beforeFirstApply), not before the run: the controller scenarios wait for
// every node to renew its Lease before they strike, which put eight runs spread before their start
// back into three phases, one per node that renewed last.
import { RekindleError } from "../errors.js";

/** The most a run's fault phase spread may be (RunSettings.faultPhaseSpreadMs). */
export const MAX_FAULT_PHASE_SPREAD_MS = 60_000;

/** The fault phase spread, checked: 0 (the default) to MAX_FAULT_PHASE_SPREAD_MS. */
export function checkFaultPhaseSpread(spreadMs: number | undefined): number {
  const spread = spreadMs ?? 0;
  if (!Number.isFinite(spread) || spread < 0 || spread > MAX_FAULT_PHASE_SPREAD_MS) {
    throw RekindleError.invalidInput(
      "fault phase spread (ms)",
      spread,
      `a number from 0 to ${MAX_FAULT_PHASE_SPREAD_MS}`,
    );
  }
  return spread;
}

/** A wait drawn at random below `spreadMs`. */
export function faultPhaseWaitMs(spreadMs: number, random: () => number = Math.random): number {
  return Math.floor(random() * spreadMs);
}
