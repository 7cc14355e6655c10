// A fence driver call that hangs, as the safety scenarios inject it: the first call of one kind
// waits, ignoring its signal (a BMC that never answers), until the scenario releases it, then fails
// without acting. The release is also an undo, so a scenario that fails half-way ends the call.
import type { FenceDriver, FenceTarget } from "../../lib/controller/drivers/types.js";
import type { ScenarioContext } from "../../lib/scenario/harness.js";

export interface Hang {
  /** Settles once released (by `release` or the undo). */
  released: Promise<void>;
  release(): void;
}

/** A hang released by `release` or, at the latest, by the undo `let the hung <what> end`. */
export function hangUntilReleased(context: ScenarioContext, what: string): Hang {
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  context.steps.registerUndo(`let the hung ${what} end (it fails without acting)`, () => {
    release();
    return Promise.resolve();
  });
  return { released, release };
}

/**
 * `inner`, with its first `call` (a power-off or a power read) hanging until `released` settles and
 * then failing without acting; `onHang` is told whose call hangs. The later calls go through.
 */
export function firstCallHangs(
  inner: FenceDriver,
  call: "powerOff" | "powerState",
  hooks: { released: Promise<void>; onHang?: (node: string) => void },
): FenceDriver {
  let hung = false;
  const hangFirst = async (target: FenceTarget): Promise<void> => {
    if (hung) return;
    hung = true;
    hooks.onHang?.(target.node);
    await hooks.released;
    throw new Error("the BMC never answered");
  };
  return {
    ...inner,
    name: inner.name,
    async powerOff(target: FenceTarget, signal?: AbortSignal) {
      if (call === "powerOff") await hangFirst(target);
      await inner.powerOff(target, signal);
    },
    async powerState(target: FenceTarget, signal?: AbortSignal) {
      if (call === "powerState") await hangFirst(target);
      return inner.powerState(target, signal);
    },
  };
}
