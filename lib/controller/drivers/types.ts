// Fence drivers: how a node is powered off (or isolated) and how that is confirmed.

export type PowerState = "on" | "off" | "unknown";

export interface FenceTarget {
  node: string;
  /** Driver options from the node's fence template (host, port, system id, url…). */
  options: Readonly<Record<string, string>>;
  /** Credentials read from the template's Secret, never from plain config. */
  credentials: Readonly<Record<string, string>>;
}

/**
 * Every method takes an optional `signal`: when it aborts, the call stops what it is doing (an
 * HTTP request, a fence agent's process) and rejects with an ABORTED RekindleError whose cause is
 * the signal's reason. The controller passes one that aborts at its driver timeout or when it stops leading.
 */
export interface FenceDriver {
  readonly name: string;
  /** What the driver's options and credentials must be; checked at start-up for every node. */
  readonly spec?: FenceDriverSpec;
  /** Asks for power off (idempotent: an already-off node is fine). */
  powerOff(target: FenceTarget, signal?: AbortSignal): Promise<void>;
  /** Power back on, for drivers that can. */
  powerOn?(target: FenceTarget, signal?: AbortSignal): Promise<void>;
  /** The node's power state as the driver sees it; "off" confirms a fence. */
  powerState(target: FenceTarget, signal?: AbortSignal): Promise<PowerState>;
  /**
   * For drivers that hear of power changes as they happen (a container engine's `die` events, the
   * sim's state file): calls `onPowerLoss` each time some machine's power went off, until
   * `options.signal` aborts. Returns at once and never throws: a lost connection is told to
   * `options.log` and retried. A notice is a hint, never evidence: the controller reads
   * `powerState` before it believes a node is off.
   */
  watchPowerLoss?(onPowerLoss: PowerLossNotice, options: PowerWatchOptions): void;
}

/** Which targets a power-loss notice is about (the driver's own matching of its options). */
export type PowerLossNotice = (isAbout: (target: Pick<FenceTarget, "node" | "options">) => boolean) => void;

export interface PowerWatchOptions {
  /** Ends the watch. */
  signal: AbortSignal;
  /** Told when the watch cannot start or breaks, and when it is back. */
  log: (message: string) => void;
}

/** One option a driver reads from its template. */
export interface DriverOption {
  /** The template must set it. Default false. */
  required?: boolean;
  /** What a valid value is, for the error message ("an https:// URL"). */
  valid: string;
  /** Whether `value` (after `{{node}}` is replaced) is valid. Default: any value. */
  test?: (value: string) => boolean;
}

/** A driver's options and credentials, as data: the start-up check reads it, so does the driver. */
export interface FenceDriverSpec {
  /** The options the driver reads. */
  options: Readonly<Record<string, DriverOption>>;
  /**
   * Options not listed are passed through to the fencing program (a fence agent's own parameters)
   * rather than refused as typos. Default false.
   */
  passThroughOptions?: boolean;
  /** Keys the template's Secret must hold; a template for this driver then needs a secretRef. Default none. */
  requiredCredentials?: readonly string[];
  /**
   * Checks that span options or credentials (https unless allowHttp, no control characters in what
   * reaches a fence agent's stdin…), on a node's resolved target: the problems, empty when none.
   */
  checkTarget?: (target: FenceTarget) => string[];
}

export function hasPowerOn(
  driver: FenceDriver,
): driver is FenceDriver & Required<Pick<FenceDriver, "powerOn">> {
  return typeof driver.powerOn === "function";
}
