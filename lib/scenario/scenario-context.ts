// The context a scenario's run() is handed: its cluster and client, its steps, the timeline's
// fault instant and marks, awaiting milestones against their windows, the in-process controller,
// and waiting for a node to be back.
import type { NodeCapability } from "../cluster/provider.js";
import { leaseRenewIntervalMs } from "../cluster/profiles.js";
import { nominalWindows } from "../expect/windows.js";
import { ConfigMapJournal } from "../fault/journal.js";
import { FaultInjector } from "../fault/injector.js";
import { faultPhaseWaitMs } from "../fault/phase-spread.js";
import { waitForChosenPhase } from "../fault/phase-choice.js";
import type { k8s } from "../kube/client.js";
import { waitForNodeBack } from "../kube/queries.js";
import type { Milestone } from "../observe/milestones.js";
import type { Progress } from "../util/progress.js";
import { sleep, waitUntil } from "../util/time.js";
import { withControllerTail } from "./controller-tail.js";
import type { ScenarioContext } from "./harness-types.js";
import type { ScenarioContextParts } from "./scenario-context-parts.js";
import { startScenarioController } from "./scenario-controller.js";

/**
 * Waits for a milestone, woken by the timeline (each transition stored, mark, the fault), not on a
 * poll; the timeout defaults to its expected window's upper bound plus a minute.
 */
function awaitMilestone<R extends NodeCapability>(
  parts: ScenarioContextParts<R>,
  name: string,
  timeoutMs: number | undefined,
): Promise<Milestone> {
  const { definition, steps, progress, signal, timeline } = parts;
  const budget = timeoutMs ?? (parts.nominal.find((w) => w.name === name)?.maxMs ?? 540_000) + 60_000;
  return steps.step(`await ${name}`, () =>
    waitUntil(() => timeline.milestones().find((m) => m.name === name), {
      what: `milestone ${name}`,
      subscribe: (wake) => timeline.subscribe(wake),
      reportEveryMs: 30_000,
      onWait: (elapsedMs) => {
        progress.info(
          `${definition.id}: still awaiting ${name} (${Math.round(elapsedMs / 1000)}s of at most ${Math.round(budget / 1000)}s)`,
        );
      },
      timeoutMs: budget,
      ...(signal ? { signal } : {}),
    }).catch((error: unknown) => {
      throw withControllerTail(error, parts.controllerTail.lines());
    }),
  );
}

export function scenarioContext<R extends NodeCapability>(
  parts: ScenarioContextParts<R>,
): ScenarioContext<R> {
  const { cluster, kc, steps, namespace, inputs, signal, progress, timeline } = parts;
  const locator = parts.given.faultLocator?.();
  return {
    cluster,
    kc,
    steps,
    namespace,
    inputs,
    signal,
    progress,
    // Each fault is registered with this scenario's undos and journalled in the cluster before it acts.
    faults: new FaultInjector({
      capabilities: cluster.capabilities,
      runId: cluster.runId,
      undo: steps,
      progress,
      ...(parts.given.faultRails ? { rails: parts.given.faultRails } : {}),
      ...(locator ? { locator, journal: ConfigMapJournal.forCluster(kc) } : {}),
      ...beforeFirstFault(parts, kc, namespace, progress, signal),
    }),
    faultStarts: (nodes) => {
      timeline.faultStarts(nodes);
    },
    mark: (name) => {
      timeline.mark(name);
    },
    sinceFaultMs: () => timeline.sinceFaultMs(),
    awaitMilestone: (name, timeoutMs) => awaitMilestone(parts, name, timeoutMs),
    milestones: () => timeline.milestones(),
    expectTimeline: (expected, recoveryOf) => {
      parts.expected = [...expected];
      parts.nominal = nominalWindows(expected);
      if (recoveryOf !== undefined) parts.recoveryOf = [...recoveryOf];
    },
    expectedTimeline: () => parts.expected,
    startController: (overrides = {}) => startScenarioController(parts, overrides),
    async waitNodeBack(node, timeoutMs = 180_000) {
      await waitForNodeBack(kc, node, {
        freshWithinMs: leaseRenewIntervalMs(cluster.profile) + 1_000,
        timeoutMs,
        ...(signal ? { signal } : {}),
      });
      await cluster.awaitNodeServing?.(node, signal);
    },
  };
}

/** The wait right before the first fault: a phase spread's random one, or the definition's chosen phase. */
function beforeFirstFault<R extends NodeCapability>(
  parts: ScenarioContextParts<R>,
  kc: k8s.KubeConfig,
  namespace: string,
  progress: Progress,
  signal: AbortSignal | undefined,
): { beforeFirstApply?: () => Promise<void> } {
  const { id, faultPhase } = parts.definition;
  if (parts.faultPhaseSpreadMs > 0) {
    return { beforeFirstApply: () => spreadFaultPhase(id, parts.faultPhaseSpreadMs, progress, signal) };
  }
  if (faultPhase === undefined) return {};
  return {
    beforeFirstApply: () => waitForChosenPhase(kc, namespace, faultPhase, { id, progress, signal }),
  };
}

/** A random wait below `spreadMs` before a run's first fault, said in the log. */
async function spreadFaultPhase(
  id: string,
  spreadMs: number,
  progress: Progress,
  signal: AbortSignal | undefined,
): Promise<void> {
  const waitMs = faultPhaseWaitMs(spreadMs);
  progress.info(`${id}: waiting ${(waitMs / 1000).toFixed(1)}s before the fault (fault phase spread)`);
  await sleep(waitMs, signal);
}
