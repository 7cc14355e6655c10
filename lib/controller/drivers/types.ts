// Fence drivers: how a node is powered off (or isolated) and how that is confirmed.

export type PowerState = "on" | "off" | "unknown";

export interface FenceTarget {
  node: string;
  /** Driver options from the node's fence template (host, port, system id, url…). */
  options: Readonly<Record<string, string>>;
  /** Credentials read from the template's Secret, never from plain config. */
  credentials: Readonly<Record<string, string>>;
}

export interface FenceDriver {
  readonly name: string;
  /** Asks for power off (idempotent: an already-off node is fine). */
  powerOff(target: FenceTarget, signal?: AbortSignal): Promise<void>;
  /** Power back on, for drivers that can. */
  powerOn?(target: FenceTarget, signal?: AbortSignal): Promise<void>;
  /** The node's power state as the driver sees it; "off" confirms a fence. */
  powerState(target: FenceTarget, signal?: AbortSignal): Promise<PowerState>;
}

export function hasPowerOn(
  driver: FenceDriver,
): driver is FenceDriver & Required<Pick<FenceDriver, "powerOn">> {
  return typeof driver.powerOn === "function";
}
