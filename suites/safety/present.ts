// Safety when a pass's decisions age: the controller decides on one read, then acts node by node.
// A power-off that hangs for one node while another node comes back must not leave the second to
// be powered off on its seconds-old "lost" verdict: every side effect re-reads its node first
// (lib/controller/present.ts).
import type { FenceDriver, FenceTarget } from "../../lib/controller/drivers/types.js";
import type { FaultHandle } from "../../lib/fault/handle.js";
import { k8s } from "../../lib/kube/client.js";
import { renewTimeOf } from "../../lib/controller/observations.js";
import { never } from "../../lib/scenario/common.js";
import { defineScenario, type ScenarioContext } from "../../lib/scenario/harness.js";
import {
  checkNothingLeftBehind,
  deriveUnsafe,
  occupyEveryWorker,
  powerBackOn,
  SAFETY_MILESTONES,
  safetyExpectations,
  startSafetyController,
} from "../../lib/scenario/safety.js";
import { leaseRenewIntervalMs } from "../../lib/cluster/profiles.js";
import { pollUntil, sleep } from "../../lib/util/time.js";
import { nodeFence } from "./shared.js";

const POWER_OFF_HUNG = "power-off-hung";
const RENEWAL_SEEN = "other-node-renewed";
const HANG_RELEASED = "hung-power-off-released";
const LET_GO = "other-node-fence-let-go";
const POWERED_OFF_RENEWED = "unsafe:powered-off-a-renewed-node";

interface HangHooks {
  /** Told which node's power-off hangs (the first one asked for). */
  onHang: (node: string) => void;
  /** The hung call fails without acting once this settles. */
  release: Promise<void>;
  /** Nodes seen renewing after their fence started: a power-off of one is the hole this scenario is about. */
  renewed: ReadonlySet<string>;
  mark: (name: string) => void;
}

/** The counted driver, with its first power-off hanging (ignoring its signal, as a BMC that never answers). */
function firstPowerOffHangs(inner: FenceDriver, hooks: HangHooks): FenceDriver {
  let hung = false;
  return {
    ...inner,
    name: inner.name,
    powerState: (target: FenceTarget, signal?: AbortSignal) => inner.powerState(target, signal),
    async powerOff(target: FenceTarget, signal?: AbortSignal) {
      if (hooks.renewed.has(target.node)) hooks.mark(POWERED_OFF_RENEWED);
      if (!hung) {
        hung = true;
        hooks.onHang(target.node);
        await hooks.release;
        throw new Error("the BMC never answered");
      }
      await inner.powerOff(target, signal);
    },
  };
}

/** The node's Lease renewTime as the API has it now. */
async function renewTime(context: ScenarioContext, node: string): Promise<string | undefined> {
  const coordination = context.kc.makeApiClient(k8s.CoordinationV1Api);
  return renewTimeOf(await coordination.readNamespacedLease({ name: node, namespace: "kube-node-lease" }));
}

export const powerOffHangsWhileAnotherRenews = defineScenario({
  id: "safety/power-off-hangs-while-another-renews",
  title:
    "two nodes cut off together, both fences started; the first power-off hangs while the other node comes back and renews: the other is not powered off, the first is fenced once",
  requires: ["partition", "lifecycle", "fencing"],
  usesController: true,
  expected: (inputs) => {
    const c = inputs.controller;
    return [
      ...safetyExpectations(1),
      never(POWERED_OFF_RENEWED, "a node seen renewing is never powered off on a verdict read before"),
      inputs.within({
        name: LET_GO,
        after: RENEWAL_SEEN,
        minMs: 0,
        maxMs: c.unhealthyAfterMs + 4 * c.checkIntervalMs,
        why: "a later pass sees it renew and lets its fence go (once Ready again, should it have been marked Unknown)",
      }),
    ];
  },
  workloads: () => [],
  recoveryOf: [],
  note: () =>
    "one node at a time (nodeConcurrency 1), as at any concurrency once more nodes are lost than it has slots",
  async run(context) {
    const { steps, inputs, kc } = context;
    const [first = "", second = ""] = await occupyEveryWorker(context);
    const pair = [first, second];
    const renewed = new Set<string>();
    let hungNode: string | undefined;
    const hang = new AbortController();
    const release = new Promise<void>((resolve) => {
      hang.signal.addEventListener("abort", () => {
        resolve();
      });
    });
    steps.registerUndo("let the hung power-off end (it fails without acting)", () => {
      hang.abort();
      return Promise.resolve();
    });
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
          firstPowerOffHangs(driver, {
            onHang: (node) => {
              hungNode = node;
              context.mark(POWER_OFF_HUNG);
            },
            release,
            renewed,
            mark: (name) => {
              context.mark(name);
            },
          }),
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
    const before = await renewTime(context, other);
    await steps.step(
      `heal ${other} while the power-off of ${hung} hangs`,
      () => cuts[pair.indexOf(other)]?.revert() ?? Promise.resolve(),
    );
    await steps.step(`wait until ${other} renews its Lease`, () =>
      pollUntil(async () => ((await renewTime(context, other)) !== before ? true : undefined), {
        what: `${other} to renew its Lease`,
        timeoutMs: 2 * renewMs + 10_000,
        intervalMs: 100,
      }),
    );
    renewed.add(other);
    context.mark(RENEWAL_SEEN);
    await steps.step(
      `let the power-off of ${hung} fail after ${2 * inputs.controller.checkIntervalMs} ms more`,
      async () => {
        await sleep(2 * inputs.controller.checkIntervalMs, context.signal);
        hang.abort();
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
    await checkNothingLeftBehind(context);
  },
  ownMilestones: [
    ...SAFETY_MILESTONES,
    POWER_OFF_HUNG,
    RENEWAL_SEEN,
    HANG_RELEASED,
    LET_GO,
    POWERED_OFF_RENEWED,
  ],
  derive: deriveUnsafe,
});
