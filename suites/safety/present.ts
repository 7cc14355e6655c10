// Safety when a pass's decisions age: the controller decides on one read, then acts node by node.
// A power-off that hangs for one node while another node comes back must not leave the second to
// be powered off on its seconds-old "lost" verdict: every side effect re-reads its node first
// (lib/controller/present.ts).
import type { FenceDriver, FenceTarget } from "../../lib/controller/drivers/types.js";
import type { FaultHandle } from "../../lib/fault/handle.js";
import { occupyEveryWorker, powerBackOn, startSafetyController } from "../../lib/scenario/safety.js";
import { leaseRenewIntervalMs } from "../../lib/cluster/profiles.js";
import { pollUntil, sleep } from "../../lib/util/time.js";
import { safetyScenario } from "./define.js";
import { firstCallHangs, hangUntilReleased } from "./hangs.js";
import { leaseRenewTime, nodeFence, renewedSince } from "./shared.js";

const POWER_OFF_HUNG = "power-off-hung";
const RENEWAL_SEEN = "other-node-renewed";
const HANG_RELEASED = "hung-power-off-released";
const LET_GO = "other-node-fence-let-go";
const POWERED_OFF_RENEWED = "unsafe:powered-off-a-renewed-node";

/**
 * `inner`, marking POWERED_OFF_RENEWED at a power-off of a node in `renewed` (seen renewing after its
 * fence started: a power-off of one is the hole this scenario is about).
 */
function markingRenewedPowerOffs(
  inner: FenceDriver,
  renewed: ReadonlySet<string>,
  mark: (name: string) => void,
): FenceDriver {
  return {
    ...inner,
    name: inner.name,
    async powerOff(target: FenceTarget, signal?: AbortSignal) {
      if (renewed.has(target.node)) mark(POWERED_OFF_RENEWED);
      await inner.powerOff(target, signal);
    },
  };
}

export const powerOffHangsWhileAnotherRenews = safetyScenario({
  id: "safety/power-off-hangs-while-another-renews",
  title:
    "two nodes cut off together, both fences started; the first power-off hangs while the other node comes back and renews: the other is not powered off, the first is fenced once",
  requires: ["partition", "lifecycle", "fencing"],
  powerOffs: 1,
  never: {
    [POWERED_OFF_RENEWED]: "a node seen renewing is never powered off on a verdict read before",
  },
  windows: (inputs) => {
    const c = inputs.controller;
    return [
      inputs.within({
        name: LET_GO,
        after: RENEWAL_SEEN,
        minMs: 0,
        maxMs: c.unhealthyAfterMs + 4 * c.checkIntervalMs,
        why: "a later pass sees it renew and lets its fence go (once Ready again, should it have been marked Unknown)",
      }),
    ];
  },
  marks: [POWER_OFF_HUNG, RENEWAL_SEEN, HANG_RELEASED, LET_GO, POWERED_OFF_RENEWED],
  note: () =>
    "one node at a time (nodeConcurrency 1), as at any concurrency once more nodes are lost than it has slots",
  async run(context) {
    const { steps, inputs, kc } = context;
    const [first = "", second = ""] = await occupyEveryWorker(context);
    const pair = [first, second];
    const renewed = new Set<string>();
    let hungNode: string | undefined;
    const hang = hangUntilReleased(context, "power-off");
    const renewMs = leaseRenewIntervalMs(inputs.profile);
    // The hang ends when the scenario says, long before the driver timeout would end it.
    const driverTimeoutMs = 4 * renewMs + 20_000;
    await startSafetyController(
      context,
      { count: 0 },
      {
        config: {
          maxUnhealthy: "2",
          // Both fences start in one pass (the fleet-wide rate's bucket holds two), so the pass
          // that hangs has the other node's fence under way on its old verdict.
          fenceBurst: 2,
          nodeConcurrency: 1,
          driverTimeoutMs,
          passTimeoutMs: driverTimeoutMs + 30_000,
        },
        wrap: (driver) =>
          markingRenewedPowerOffs(
            firstCallHangs(driver, "powerOff", {
              released: hang.released,
              onHang: (node) => {
                hungNode = node;
                context.mark(POWER_OFF_HUNG);
              },
            }),
            renewed,
            (name) => {
              context.mark(name);
            },
          ),
      },
    );
    const cuts: FaultHandle[] = [];
    for (const node of pair) {
      cuts.push(
        await steps.step(`partition ${node}`, () =>
          context.faults.inject({
            action: { kind: "partition" },
            nodes: [node],
            durationMs: 6 * inputs.controller.unhealthyAfterMs + 120_000,
            onFirstEffect: () => {
              if (node === first) context.faultStarts(pair);
            },
          }),
        ),
      );
    }
    const lostTimeoutMs = 4 * inputs.controller.unhealthyAfterMs + 60_000;
    await steps.step("wait for the first power-off, which hangs", () =>
      pollUntil(async () => Promise.resolve(hungNode), {
        what: "a power-off of one of the two nodes",
        timeoutMs: lostTimeoutMs,
        intervalMs: 100,
      }),
    );
    const hung = hungNode ?? "";
    const other = hung === first ? second : first;
    const before = await leaseRenewTime(context, other);
    await steps.step(
      `heal ${other} while the power-off of ${hung} hangs`,
      () => cuts[pair.indexOf(other)]?.revert() ?? Promise.resolve(),
    );
    await steps.step(`wait until ${other} renews its Lease`, () => renewedSince(context, other, before));
    renewed.add(other);
    context.mark(RENEWAL_SEEN);
    await steps.step(
      `let the power-off of ${hung} fail after ${2 * inputs.controller.checkIntervalMs} ms more`,
      async () => {
        await sleep(2 * inputs.controller.checkIntervalMs, context.signal);
        hang.release();
        context.mark(HANG_RELEASED);
      },
    );
    // Its fence most likely started in the pass before the hang (they went silent together); had
    // it not, the pass that hangs must not start it either (deriveUnsafe: no fence of a renewing node).
    await steps.step(`wait until the fence of ${other}, if any, is let go`, async () => {
      await sleep(2 * inputs.controller.checkIntervalMs, context.signal);
      await pollUntil(
        async () => {
          const fence = await nodeFence(kc, other);
          return fence === undefined || fence.status?.step === "recovery" ? true : undefined;
        },
        { what: `the fence of ${other} to reach recovery`, timeoutMs: lostTimeoutMs, intervalMs: 200 },
      );
    });
    context.mark(LET_GO);
    await steps.step(`wait until ${hung} is fenced on a retry`, () =>
      pollUntil(
        async () => ((await nodeFence(kc, hung))?.status?.fencedAt !== undefined ? true : undefined),
        {
          what: `the fence of ${hung} confirmed`,
          timeoutMs: lostTimeoutMs,
          intervalMs: 200,
        },
      ),
    );
    await powerBackOn(context, hung);
  },
});
