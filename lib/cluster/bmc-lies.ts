// A lying BMC, as a setting of the test BMCs (the sim's fence driver, the kind power webhook, the
// Redfish front): per node, its power reads may answer "off" whatever the machine does, and its
// power-off may be acknowledged as done while nothing is done. Nothing in the controller knows of
// it: the lie is in what the BMC answers.
import type { FenceDriver, FenceTarget, PowerState } from "../controller/drivers/types.js";

/** What a node's BMC lies about; each knob is independent. */
export interface BmcLie {
  /** Every power read answers "off", whatever the machine does. */
  powerReadsOff: boolean;
  /** A power-off is acknowledged as done and does nothing. */
  powerOffNoop: boolean;
}

/** The truth: what a node's BMC does when no lie is set. */
export const TRUTHFUL_BMC: Readonly<BmcLie> = Object.freeze({ powerReadsOff: false, powerOffNoop: false });

/**
 * The lies of a set of BMCs, by node name, shared by every driver or server that plays them: a
 * change is seen by the next call of each. Empty: every BMC tells the truth.
 */
export class BmcLies {
  readonly #lies = new Map<string, BmcLie>();

  /** `node`'s BMC lies as `lie` says from its next call on; a lie with both knobs off is cleared. */
  set(node: string, lie: Partial<BmcLie>): void {
    const full = { ...TRUTHFUL_BMC, ...lie };
    if (!full.powerReadsOff && !full.powerOffNoop) this.#lies.delete(node);
    else this.#lies.set(node, full);
  }

  /** `node`'s BMC tells the truth again. Returns whether it was lying. */
  clear(node: string): boolean {
    return this.#lies.delete(node);
  }

  /** Every BMC tells the truth again. */
  clearAll(): void {
    this.#lies.clear();
  }

  /** What `node`'s BMC lies about now. */
  of(node: string): Readonly<BmcLie> {
    return this.#lies.get(node) ?? TRUTHFUL_BMC;
  }

  /** The nodes whose BMC lies now, sorted. */
  lying(): string[] {
    return [...this.#lies.keys()].sort();
  }
}

/** "power reads off, power-off a no-op", for logs; "the truth" when neither. */
export function describeLie(lie: Readonly<BmcLie>): string {
  const parts = [
    ...(lie.powerReadsOff ? ["power reads off"] : []),
    ...(lie.powerOffNoop ? ["power-off a no-op"] : []),
  ];
  return parts.length === 0 ? "the truth" : parts.join(", ");
}

/**
 * `inner` behind lying BMCs: a driver for BMCs that do not read the lies themselves (kind's docker
 * driver). Power-on and power-loss notices are the machine's own and pass through.
 */
export function lyingFenceDriver(inner: FenceDriver, lies: BmcLies): FenceDriver {
  return {
    name: inner.name,
    ...(inner.spec ? { spec: inner.spec } : {}),
    async powerOff(target: FenceTarget, signal?: AbortSignal): Promise<void> {
      if (lies.of(target.node).powerOffNoop) return;
      await inner.powerOff(target, signal);
    },
    ...(inner.powerOn
      ? {
          powerOn: (target: FenceTarget, signal?: AbortSignal) =>
            inner.powerOn?.(target, signal) ?? Promise.resolve(),
        }
      : {}),
    async powerState(target: FenceTarget, signal?: AbortSignal): Promise<PowerState> {
      if (lies.of(target.node).powerReadsOff) return "off";
      return inner.powerState(target, signal);
    },
    ...(inner.watchPowerLoss
      ? {
          watchPowerLoss: (...args: Parameters<NonNullable<FenceDriver["watchPowerLoss"]>>) => {
            inner.watchPowerLoss?.(...args);
          },
        }
      : {}),
  };
}

/**
 * The `bmc-lies` capability over `lies`, saying each change on `info` (a cluster's progress): the
 * same for every provider whose BMCs read one shared BmcLies.
 */
export function bmcLieControl(
  lies: BmcLies,
  info: (line: string) => void,
): {
  setBmcLie(node: string, lie: Partial<BmcLie>): Promise<void>;
  clearBmcLie(node: string): Promise<void>;
} {
  return {
    setBmcLie(node, lie) {
      lies.set(node, lie);
      info(`node ${node}: its BMC lies (${describeLie(lies.of(node))})`);
      return Promise.resolve();
    },
    clearBmcLie(node) {
      if (lies.clear(node)) info(`node ${node}: its BMC tells the truth again`);
      return Promise.resolve();
    },
  };
}
