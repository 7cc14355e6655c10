// Safety scenarios where no node may be fenced at all: a condition makes live nodes look lost (a
// zone cut off, a kubelet clock behind, a frozen API server, a BMC reporting power losses that did
// not happen) and then ends. Each is a safetyScenario with no power-off allowed, no fence (its
// `noFence`), no workloads of its own to recover: its condition only.
import type { FenceDriver } from "../../lib/controller/drivers/types.js";
import { leaseRenewIntervalMs } from "../../lib/cluster/profiles.js";
import { k8s } from "../../lib/kube/client.js";
import { ZONE_LABEL } from "../../lib/kube/queries.js";
import { sleep } from "../../lib/util/time.js";
import { injectFault } from "../../lib/scenario/common.js";
import type { ScenarioContext } from "../../lib/scenario/harness.js";
import { occupyEveryWorker, startSafetyController } from "../../lib/scenario/safety.js";
import { safetyScenario } from "./define.js";
import { healThenWatch, PARTITION_HEALED, watchAfterMs } from "./shared.js";

/** Waits, as one step, until the controller has seen every node renew (twice, and a check after). */
async function seeEveryNodeRenew(context: ScenarioContext): Promise<void> {
  const { inputs } = context;
  await context.steps.step("let the controller see every node renew", () =>
    sleep(2 * leaseRenewIntervalMs(inputs.profile) + inputs.controller.checkIntervalMs, context.signal),
  );
}

/** Every worker of the zone with the most workers. */
async function largestZone(context: ScenarioContext): Promise<string[]> {
  const workers = new Set(await context.cluster.workerNodes());
  const zones = new Map<string, string[]>();
  for (const n of (await context.kc.makeApiClient(k8s.CoreV1Api).listNode()).items) {
    const name = n.metadata?.name ?? "";
    const zone = n.metadata?.labels?.[ZONE_LABEL];
    if (zone && workers.has(name)) zones.set(zone, [...(zones.get(zone) ?? []), name]);
  }
  return [...zones.values()].sort((a, b) => b.length - a.length)[0] ?? [];
}

export const zonePartitionHealed = safetyScenario({
  id: "safety/zone-partition-healed",
  title:
    "a zone partitioned past unhealthyAfter, then healed: the guard holds meanwhile, and no node is fenced while they renew one by one",
  requires: ["partition", "fencing"],
  powerOffs: 0,
  noFence: "the zone's nodes are alive and renew once healed",
  marks: [PARTITION_HEALED],
  async run(context) {
    const { steps, inputs } = context;
    await occupyEveryWorker(context);
    const zone = await largestZone(context);
    await startSafetyController(context, { count: 0 });
    const cutMs = 2 * inputs.controller.unhealthyAfterMs;
    const cut = await injectFault(context, `partition zone nodes ${zone.join(", ")}`, {
      action: { kind: "partition" },
      nodes: zone,
      durationMs: cutMs,
    });
    await steps.step(`keep the zone cut off ${cutMs / 1000}s (past unhealthyAfter)`, () =>
      sleep(cutMs, context.signal),
    );
    await healThenWatch(context, cut, zone, "no fence may start");
  },
});

const CLOCK_OFFSET_MS = -30_000;

export const kubeletClockBehind = safetyScenario({
  id: "safety/kubelet-clock-behind",
  title:
    "a kubelet clock steps 30 s behind: its Lease looks 30 s old to a clock-comparing controller, but it renews and is never fenced",
  requires: ["clock-skew", "fencing"],
  powerOffs: 0,
  noFence: "the node renews; only its clock is wrong",
  note: (inputs) =>
    `watches ${(3 * inputs.controller.unhealthyAfterMs) / 1000 + 5}s with the clock 30 s behind`,
  async run(context) {
    const { steps, cluster, inputs } = context;
    const [node = ""] = await occupyEveryWorker(context);
    await startSafetyController(context, { count: 0 });
    await seeEveryNodeRenew(context);
    const clock = cluster.capabilities["clock-skew"];
    await steps.step(`step ${node}'s kubelet clock ${-CLOCK_OFFSET_MS / 1000}s behind`, async () => {
      context.faultStarts([node]);
      await clock.setClockOffset(node, CLOCK_OFFSET_MS, { step: true });
    });
    steps.registerUndo(`set ${node}'s kubelet clock right`, () => clock.clearClockOffset(node));
    const watchMs = 3 * inputs.controller.unhealthyAfterMs + 5_000;
    await steps.step(`watch ${watchMs / 1000}s: no fence may start`, () => sleep(watchMs, context.signal));
    await steps.step(`set ${node}'s kubelet clock right`, () => clock.clearClockOffset(node));
  },
});

const API_RESUMED = "apiserver-resumed";

export const apiServerPaused = safetyScenario({
  id: "safety/apiserver-paused",
  title:
    "kube-apiserver freezes for three times unhealthyAfter: every Lease is stale when it answers again, and no node is fenced while they renew",
  requires: ["apiserver-pause", "fencing"],
  powerOffs: 0,
  noFence: "nobody could renew while the API server was frozen",
  marks: [API_RESUMED],
  async run(context) {
    const { steps, cluster, inputs } = context;
    const workers = await occupyEveryWorker(context);
    await startSafetyController(context, { count: 0 });
    await seeEveryNodeRenew(context);
    const pauseMs = 3 * inputs.controller.unhealthyAfterMs;
    await steps.step(`freeze kube-apiserver for ${pauseMs / 1000}s`, async () => {
      context.faultStarts(workers);
      await cluster.capabilities["apiserver-pause"].pauseApiServer(pauseMs);
      context.mark(API_RESUMED);
    });
    await steps.step(`watch ${watchAfterMs(inputs) / 1000}s more: no fence may start`, () =>
      sleep(watchAfterMs(inputs), context.signal),
    );
  },
});

const NOTICE_READ = "power-read-after-notice";
const NOTICE_EVERY_MS = 500;

/**
 * The counted driver, with a BMC that, once `begun` resolves, reports every node's power lost every
 * NOTICE_EVERY_MS while its power reads stay true; `onReadAfterNotice` is told of the first read
 * after a notice.
 */
function spuriousPowerLossNotices(
  inner: FenceDriver,
  hooks: { begun: Promise<void>; onReadAfterNotice: () => void },
): FenceDriver {
  let noticed = false;
  let told = false;
  return {
    ...inner,
    powerState: async (target, signal) => {
      if (noticed && !told) {
        told = true;
        hooks.onReadAfterNotice();
      }
      return inner.powerState(target, signal);
    },
    watchPowerLoss(onPowerLoss, { signal }) {
      void hooks.begun.then(() => {
        if (signal.aborted) return;
        const timer = setInterval(() => {
          noticed = true;
          onPowerLoss(() => true);
        }, NOTICE_EVERY_MS);
        signal.addEventListener(
          "abort",
          () => {
            clearInterval(timer);
          },
          { once: true },
        );
      });
    },
  };
}

export const powerLossNoticesWhileOn = safetyScenario({
  id: "safety/power-loss-notices-while-on",
  title:
    "the fence driver reports every node's power lost twice a second while all run: the notices bring power reads, every read finds the node on, and none is fenced",
  requires: ["fencing"],
  powerOffs: 0,
  noFence: "a power-loss notice is a hint: only a power read that finds the node off is evidence",
  marks: [NOTICE_READ],
  windows: (inputs) => [
    inputs.within({
      name: NOTICE_READ,
      after: "fault-injected",
      minMs: 0,
      maxMs: NOTICE_EVERY_MS + 2 * inputs.controller.checkIntervalMs,
      why: "a notice brings the power read forward, with no renewal missed",
    }),
  ],
  note: (inputs) => `notices for ${(2 * inputs.controller.unhealthyAfterMs) / 1000}s`,
  async run(context) {
    const { steps, inputs } = context;
    const workers = await occupyEveryWorker(context);
    let begin = (): void => undefined;
    const begun = new Promise<void>((resolve) => {
      begin = resolve;
    });
    await startSafetyController(
      context,
      { count: 0 },
      {
        wrap: (driver) =>
          spuriousPowerLossNotices(driver, {
            begun,
            onReadAfterNotice: () => {
              context.mark(NOTICE_READ);
            },
          }),
      },
    );
    await seeEveryNodeRenew(context);
    const floodMs = 2 * inputs.controller.unhealthyAfterMs;
    await steps.step(
      `report every node's power lost every ${NOTICE_EVERY_MS / 1000}s for ${floodMs / 1000}s`,
      async () => {
        context.faultStarts(workers);
        begin();
        await sleep(floodMs, context.signal);
      },
    );
  },
});
