// Safety of the early power read (lib/controller/early-power.ts): a silent node's power is read at
// its first missed renewal, and a node read off is fenced at once. The read is a driver call like
// any other: when it hangs, nothing may wait for it. The node is then fenced by the silence path,
// after unhealthyAfter, with its own reads, and exactly once.
import type { FenceDriver, FenceTarget } from "../../lib/controller/drivers/types.js";
import {
  detectionWindow,
  expectedControllerRecovery,
  never,
  nodeLossWorkloads,
} from "../../lib/scenario/common.js";
import { defineScenario } from "../../lib/scenario/harness.js";
import {
  checkNothingLeftBehind,
  powerBackOn,
  SAFETY_MILESTONES,
  safetyExpectations,
} from "../../lib/scenario/safety.js";
import { deriveUnsafeOrTwice, openWithNodeLost } from "./shared.js";

const READ_HUNG = "early-power-read-hung";

/** The counted driver, with the first power read hanging until `release` (ignoring its signal). */
function firstPowerReadHangs(
  inner: FenceDriver,
  hooks: { onHang: (node: string) => void; release: Promise<void> },
): FenceDriver {
  let hung = false;
  return {
    ...inner,
    name: inner.name,
    powerOff: (target: FenceTarget, signal?: AbortSignal) => inner.powerOff(target, signal),
    async powerState(target: FenceTarget, signal?: AbortSignal) {
      if (!hung) {
        hung = true;
        hooks.onHang(target.node);
        await hooks.release;
        throw new Error("the BMC never answered");
      }
      return inner.powerState(target, signal);
    },
  };
}

export const earlyPowerReadHangs = defineScenario({
  id: "safety/early-power-read-hangs",
  title:
    "the early power read of a stopped node hangs: nothing waits for it, the node is fenced after unhealthyAfter by the silence path, once",
  requires: ["lifecycle", "fencing"],
  usesController: true,
  expected: (inputs) => [
    ...safetyExpectations(1),
    ...expectedControllerRecovery(inputs, { earlyReadFails: true }),
    {
      name: READ_HUNG,
      after: "fault-injected",
      ...detectionWindow(inputs, { poweredOff: true }),
      why: "the node's power is read at its first missed renewal (and this read hangs)",
    },
    never("fence-started-twice", "one fence for one incident"),
  ],
  workloads: nodeLossWorkloads,
  recoveryOf: ["statefulset", "statefulset-plain"],
  note: (inputs) =>
    `the driver's first power read hangs until the end; unhealthyAfter ${inputs.controller.unhealthyAfterMs / 1000}s`,
  async run(context) {
    const { steps, inputs } = context;
    // The hang outlasts unhealthyAfter: no second early read may come before the silence path.
    const driverTimeoutMs = 4 * inputs.controller.unhealthyAfterMs + 20_000;
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    steps.registerUndo("let the hung power read end (it fails without acting)", () => {
      release();
      return Promise.resolve();
    });
    const { node } = await openWithNodeLost(
      context,
      { count: 0 },
      {
        config: { driverTimeoutMs, passTimeoutMs: driverTimeoutMs + 30_000 },
        wrap: (driver) =>
          firstPowerReadHangs(driver, {
            onHang: () => {
              context.mark(READ_HUNG);
            },
            release: released,
          }),
      },
    );
    await context.awaitMilestone(READ_HUNG);
    await context.awaitMilestone("statefulset:recovered");
    await context.awaitMilestone("statefulset-plain:recovered");
    await powerBackOn(context, node);
    await checkNothingLeftBehind(context);
  },
  ownMilestones: [...SAFETY_MILESTONES, READ_HUNG, "fence-started-twice"],
  derive: deriveUnsafeOrTwice,
});
