// Power-on after a fence (--power-on-after-fence) only for a node its driver reports off: a node
// already on (someone powered it on, or it never went down) is left alone, and a node whose state
// cannot be read is not switched blindly.
import { RekindleError } from "../../errors.js";
import { hasPowerOn, type FenceDriver, type FenceTarget } from "./types.js";

/** What `powerOnIfOff` did: powered the node on, or found it on already. */
export type PowerOnOutcome = "powered-on" | "already-on";

/**
 * Reads the node's power state; powers it on only when "off". Throws PRECONDITION when the state is
 * unknown (the caller retries on its next pass), UNSUPPORTED when the driver cannot power on.
 */
export async function powerOnIfOff(
  driver: FenceDriver,
  target: FenceTarget,
  signal?: AbortSignal,
): Promise<PowerOnOutcome> {
  if (!hasPowerOn(driver)) {
    throw new RekindleError("UNSUPPORTED", `fence driver ${driver.name} cannot power ${target.node} on`);
  }
  const state = await driver.powerState(target, signal);
  if (state === "on") return "already-on";
  if (state !== "off") {
    throw new RekindleError(
      "PRECONDITION",
      `not powering ${target.node} on: fence driver ${driver.name} reports its power state ${state}, not off`,
    );
  }
  await driver.powerOn(target, signal);
  return "powered-on";
}
