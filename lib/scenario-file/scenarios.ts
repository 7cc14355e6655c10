// A scenario file as a scenario: its workloads deployed from their manifests, the controller if it
// asks for one, the fault on its target, the operator's reflex, the fault lifted after its
// duration; expected windows derived from each workload's own spec and refined once the fault's
// reach is known (which workloads had pods on the faulted nodes); budgets checked beside them.
import type { ClusterUnderTest } from "../cluster/provider.js";
import { k8s } from "../kube/client.js";
import { listStorageClasses, type StorageClassInfo } from "../kube/storage-classes.js";
import {
  defineScenario,
  type ExpectationInputs,
  type ScenarioContext,
  type ScenarioDefinition,
} from "../scenario/harness.js";
import type { WorkloadRef } from "../observe/milestones.js";
import { nominalWindows, type ExpectedMilestone } from "../expect/windows.js";
import { TIMING_PROFILES } from "../cluster/profiles.js";
import { budgetsExpectedNever, checkBudgets } from "../expect/budgets.js";
import { observeTail } from "../scenario/observe-tail.js";
import { RekindleError } from "../errors.js";
import { fileControllerOverrides } from "./controller.js";
import { deployWorkloads, dryRunWorkloads } from "./deploy.js";
import { fileExpectations, fileWorkloadFacts, type FileWorkloadFacts } from "./expected.js";
import {
  FAULT_CAPABILITIES,
  FAULT_MARKS,
  injectFault,
  liftFaultAfterDuration,
  operatorActs,
} from "./fault.js";
import { readWorkloadObjects, type WorkloadObjects } from "./manifests.js";
import type { FilePlan } from "./plan.js";
import { deployProbers, proberImage, probeTargets } from "./probes.js";
import { resolveTarget } from "./target.js";
import type { ScenarioFile, TargetSpec } from "./types.js";

export interface PreparedFileScenario {
  /** The scenario file it came from. */
  file: string;
  definition: ScenarioDefinition;
  repeat: number;
}

function targetText(target: TargetSpec): string {
  switch (target.kind) {
    case "workload":
      return `the node of ${target.workload}`;
    case "selector":
      return Object.entries(target.matchLabels)
        .map(([k, v]) => `${k}=${v}`)
        .join(",");
    case "zone":
      return `${target.count ?? "every"} worker(s) of ${target.zone}`;
  }
}

/** A file's scenario id and title, known from the file alone (`rekindle run --shard` selects by them). */
export function fileScenarioName(file: ScenarioFile): { id: string; title: string } {
  return {
    id: `file/${file.name}`,
    title: file.description ?? `${file.fault.type} on ${targetText(file.fault.target)}`,
  };
}

/** Pods of each workload on the faulted nodes, just before the fault. */
async function lostPodsOf(
  context: ScenarioContext,
  facts: readonly FileWorkloadFacts[],
  nodes: readonly string[],
): Promise<ReadonlyMap<string, number>> {
  const pods = (
    await context.kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace: context.namespace })
  ).items;
  const lost = new Map<string, number>();
  for (const f of facts) {
    const count = pods.filter(
      (p) =>
        nodes.includes(p.spec?.nodeName ?? "") &&
        Object.entries(f.matchLabels).every(([k, v]) => p.metadata?.labels?.[k] === v),
    ).length;
    lost.set(f.id, count);
  }
  return lost;
}

/** The milestones a run awaits: each touched workload's recovery (and serving, and answering), where expected to come. */
function awaited(
  context: ScenarioContext,
  facts: readonly FileWorkloadFacts[],
  lost: ReadonlyMap<string, number>,
): string[] {
  const finite = new Set(
    nominalWindows(context.expectedTimeline())
      .filter((w) => w.maxMs !== null)
      .map((w) => w.name),
  );
  return facts
    .filter((f) => (lost.get(f.id) ?? 0) > 0)
    .flatMap((f) => [
      `${f.id}:recovered`,
      ...(f.service !== undefined ? [`${f.id}:serving`] : []),
      ...(f.probe !== undefined ? [`${f.id}:answering`] : []),
    ])
    .filter((name) => finite.has(name));
}

/**
 * The file's scenario. `storageClasses`: the cluster's, for the workloads' volumes (a claim naming
 * no class gets the cluster's default, which may keep its volume on one node). `proberImage`: what
 * the file's probes run (checked on the cluster by prepareFileScenarios); none for `list`.
 */
function fileScenario(
  file: ScenarioFile,
  objects: readonly WorkloadObjects[],
  storageClasses: readonly StorageClassInfo[],
  proberImage?: string,
): ScenarioDefinition {
  const { fault } = file;
  const factsFor = (inputs: ExpectationInputs) => fileWorkloadFacts(objects, inputs, storageClasses);
  // Labels, Service, replicas and node-local volumes do not depend on the cluster's timings: read
  // once for `workloads`.
  const shapes = fileWorkloadFacts(
    objects,
    { profile: TIMING_PROFILES.default, volumeAttachRequired: true },
    storageClasses,
  );
  const probes = probeTargets(file, objects, (name) => shapes.find((f) => f.id === name)?.service);
  return defineScenario({
    ...fileScenarioName(file),
    // The context is typed with every fault capability; `requires` lists only this fault's, which
    // is what the run checks, and the fault touches only those (fault.ts).
    requires: FAULT_CAPABILITIES[fault.type],
    usesController: file.controller.enabled,
    expected: (inputs) => fileExpectations(file, factsFor(inputs), inputs, "assumed"),
    workloads: (namespace): WorkloadRef[] =>
      shapes.map((f) => ({
        id: f.id,
        matchLabels: f.matchLabels,
        namespace,
        ...(f.service !== undefined ? { service: f.service } : {}),
        ...(f.probe !== undefined ? { probed: true } : {}),
        ...(f.volume === "node-local" ? { pinnedToNode: true } : {}),
      })),
    ownMilestones: FAULT_MARKS,
    budgets: (context) =>
      checkBudgets(file.budgets, {
        milestones: context.milestones,
        transitions: context.transitions,
        faultAtMs: context.faultAtMs,
        faultNodes: context.faultNodes,
        expected: context.expected,
        workloads: factsFor(context.inputs).map((f) => ({
          id: f.id,
          namespace: context.namespace,
          matchLabels: f.matchLabels,
          wanted: f.replicas,
        })),
      }),
    async run(context) {
      const facts = factsFor(context.inputs);
      await deployWorkloads(
        context,
        objects,
        facts.map((f) => ({
          workload: f.id,
          matchLabels: f.matchLabels,
          replicas: f.readyReplicas,
          ...(f.service !== undefined ? { service: f.service } : {}),
        })),
      );
      if (probes.length > 0) {
        if (proberImage === undefined)
          throw new RekindleError("INTERNAL", `${file.path}: probes to run, but no image checked for them`);
        await deployProbers(context, probes, proberImage);
      }
      if (file.controller.enabled)
        await context.startController(fileControllerOverrides(context, file.controller));
      const workers = await context.cluster.workerNodes();
      const nodes = await context.steps.step(`find the target: ${targetText(fault.target)}`, () =>
        resolveTarget(fault.target, {
          kc: context.kc,
          workers,
          namespace: context.namespace,
          podLabels: (name) => facts.find((f) => f.id === name)?.matchLabels,
        }),
      );
      const lost = await lostPodsOf(context, facts, nodes);
      context.progress.info(
        `${file.name}: fault on ${nodes.join(", ")}; pods there: ${[...lost].map(([id, n]) => `${id} ${n}`).join(", ")}`,
      );
      context.expectTimeline(
        fileExpectations(file, facts, context.inputs, lost),
        facts.filter((f) => (lost.get(f.id) ?? 0) > 0).map((f) => f.id),
      );
      const handle = await injectFault(context, fault, nodes);
      await Promise.all([
        liftFaultAfterDuration(context, fault, handle),
        operatorActs(context, fault, nodes),
        (async () => {
          for (const name of awaited(context, facts, lost)) await context.awaitMilestone(name);
        })(),
      ]);
      await observeTail(context);
    },
  });
}

/**
 * The files' scenarios for this cluster: their manifests read (kustomize with the cluster's kubectl),
 * checked by the API server with a server-side dry run, and selector or zone targets resolved, so a
 * manifest the API rejects or a target that selects no node is refused before anything starts.
 */
export async function prepareFileScenarios(
  plan: FilePlan,
  cluster: ClusterUnderTest,
): Promise<PreparedFileScenario[]> {
  const kc = cluster.kubeConfig();
  const workers = await cluster.workerNodes();
  const storageClasses = await listStorageClasses(kc);
  const prepared: PreparedFileScenario[] = [];
  const probed = plan.files.some((f) => f.workloads.some((w) => w.probe !== undefined));
  const image = probed ? await proberImage(cluster) : undefined;
  for (const file of plan.files) {
    const objects = await readWorkloadObjects(file, cluster.kubectlPath?.());
    // "default" exists on every cluster; the scenario's own namespace does not exist yet.
    await dryRunWorkloads(kc, file.path, objects, "default");
    if (file.fault.target.kind !== "workload") {
      await resolveTarget(file.fault.target, {
        kc,
        workers,
        namespace: "default",
        podLabels: () => undefined,
      });
    }
    prepared.push({
      file: file.path,
      definition: fileScenario(file, objects, storageClasses, image),
      repeat: plan.repeats.get(file.path) ?? 1,
    });
  }
  return prepared;
}

export interface ListedFileScenario {
  id: string;
  file: string;
  title: string;
  requires: readonly string[];
  expected: ExpectedMilestone[];
  /** Budgets that cannot be met: their milestone is expected never to come (budgetsExpectedNever). */
  budgetsExpectedNever: string[];
}

/**
 * Each file's scenario and its windows before any cluster exists (`rekindle list -f`): the
 * manifests' own StorageClasses are known, the cluster's are not (a claim naming no class is taken
 * to be on the sim's default class, which attaches).
 */
export async function listedFileScenarios(
  plan: FilePlan,
  inputs: ExpectationInputs,
): Promise<ListedFileScenario[]> {
  const listed: ListedFileScenario[] = [];
  for (const file of plan.files) {
    const definition = fileScenario(file, await readWorkloadObjects(file), []);
    const expected = definition.expected(inputs);
    listed.push({
      id: definition.id,
      file: file.path,
      title: definition.title,
      requires: definition.requires,
      expected,
      budgetsExpectedNever: budgetsExpectedNever(file.budgets, expected),
    });
  }
  return listed;
}
