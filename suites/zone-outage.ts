// Zone outage: every worker of one zone stops at once. More nodes are lost than the controller's
// maxUnhealthy allows, so its guard must hold (and say why in an Event) instead of fencing a
// whole zone, which is what a network split between zones looks like from one side.
// The controller runs with early power reads off: a split reads ON, so silence is all it has, and
// nodes silent together are counted together. Nodes read OFF are counted one by one as each is read
// (their fence powers nothing off), so whether the first fits the budget would depend on the
// phases of their Lease renewals: safety/zone-nodes-powered-off-together covers that path.
import * as allure from "allure-js-commons";
import { RekindleError } from "../lib/errors.js";
import type { ExpectedMilestone } from "../lib/expect/model.js";
import { k8s } from "../lib/kube/client.js";
import { ZONE_LABEL } from "../lib/kube/queries.js";
import { NODE_EVENT_NAMESPACE } from "../lib/controller/events.js";
import type { Milestone } from "../lib/observe/milestones.js";
import { sleep } from "../lib/util/time.js";
import { defineScenario, type ScenarioContext } from "../lib/scenario/harness.js";
import { deployWebAndDb, detectionWindow, noFence, nodeLossWorkloads } from "../lib/scenario/common.js";

/** The zone with the most workers (at least two), and those workers. */
async function largestZone(context: ScenarioContext): Promise<{ zone: string; nodes: string[] }> {
  const workers = new Set(await context.cluster.workerNodes());
  const nodes = (await context.kc.makeApiClient(k8s.CoreV1Api).listNode()).items.filter((n) =>
    workers.has(n.metadata?.name ?? ""),
  );
  const zones = new Map<string, string[]>();
  for (const node of nodes) {
    const zone = node.metadata?.labels?.[ZONE_LABEL];
    if (zone) zones.set(zone, [...(zones.get(zone) ?? []), node.metadata?.name ?? ""]);
  }
  const [zone, members] = [...zones.entries()].sort((a, b) => b[1].length - a[1].length)[0] ?? ["", []];
  if (members.length < 2) {
    throw new RekindleError("UNSUPPORTED", "a zone outage needs a zone with at least 2 workers", {
      hint: `label workers with ${ZONE_LABEL} (kind-config.yaml and the sim put 2 of 3 workers in zone-a)`,
    });
  }
  return { zone, nodes: members.sort() };
}

export const zoneOutageGuardHolds = defineScenario({
  id: "zone-outage/guard-holds",
  title: "every worker of a zone lost at once: more than maxUnhealthy, so the guard holds and says why",
  requires: ["lifecycle"],
  usesController: true,
  expected: (inputs) => {
    const detect = detectionWindow(inputs);
    const held: ExpectedMilestone[] = [1, 2].map((i) => ({
      name: `guard-held:node-${i}`,
      after: "fault-injected",
      ...detect,
      why: `lost ${i === 1 ? "first" : "second"} zone node: the guard refuses past maxUnhealthy ${inputs.controller.maxUnhealthy} and records FenceGuardHeld`,
    }));
    return [
      ...held,
      ...noFence(`the guard's budget (maxUnhealthy ${inputs.controller.maxUnhealthy}) is exceeded`),
    ];
  },
  workloads: nodeLossWorkloads,
  recoveryOf: [],
  async run(context) {
    const { steps, inputs } = context;
    await deployWebAndDb(context);
    const { zone, nodes } = await steps.step("find the zone with the most workers", () =>
      largestZone(context),
    );
    const controller = await context.startController({ config: { earlyPowerRead: false } });
    // Undone newest first: the controller stopped, then the handle starts the nodes, then the wait.
    steps.registerUndo(`wait until ${nodes.join(", ")} are back`, async () => {
      for (const node of nodes) await context.waitNodeBack(node);
    });
    const outage = await context.faults.begin({
      action: { kind: "stop" },
      nodesHint: nodes,
      onFirstEffect: () => {
        context.faultStarts(nodes);
      },
    });
    // Stopped first: once one node is back, the other is a single lost node the guard would let
    // the controller fence, while its own restart is still under way.
    steps.registerUndo("stop the controller before the zone's nodes start", () => controller.stop());
    await steps.step(`stop every worker of ${zone}: ${nodes.join(", ")}`, () =>
      outage.apply(nodes, { concurrent: true }),
    );
    for (let i = 1; i <= Math.min(2, nodes.length); i++) await context.awaitMilestone(`guard-held:node-${i}`);
    const watchMs = 3 * inputs.controller.checkIntervalMs + inputs.slackMs;
    await steps.step(`watch ${watchMs / 1000}s more: the guard keeps holding`, () =>
      sleep(watchMs, context.signal),
    );
    const events = await context.kc
      .makeApiClient(k8s.CoreV1Api)
      .listNamespacedEvent({ namespace: NODE_EVENT_NAMESPACE });
    const decisions = events.items
      .filter((e) => e.reason === "FenceGuardHeld" && nodes.includes(e.involvedObject.name ?? ""))
      .map((e) => `${e.involvedObject.name ?? ""}: ${e.message ?? ""}`);
    context.progress.info(`guard decisions:\n  ${decisions.join("\n  ")}`);
    await allure.attachment("guard-decisions.txt", decisions.join("\n"), "text/plain");
  },
  ownMilestones: [/^guard-held:node-\d+$/],
  derive: (transitions, { faultAtMs, faultNodes }) => {
    const out: Milestone[] = [];
    faultNodes.forEach((node, index) => {
      const held = transitions.find(
        (t) =>
          t.atMs >= faultAtMs &&
          t.name === "event" &&
          t.node === node &&
          t.detail?.["reason"] === "FenceGuardHeld",
      );
      if (held) out.push({ name: `guard-held:node-${index + 1}`, atMs: held.atMs - faultAtMs, node });
    });
    return out;
  },
});

/** The family's scenarios, in the order `rekindle run` runs them. */
export const scenarios = [zoneOutageGuardHolds];
