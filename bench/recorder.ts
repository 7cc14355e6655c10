// `npm run bench:recorder` (issue 24 item 3): what the scenario harness's recorder and milestone
// waiting cost on sim clusters of the sizes given. Per size: the recorder started as the harness
// starts it (its namespace's pods and events, every Node, Lease and VolumeAttachment); at rest for
// --rest-seconds; one node lost and back, awaited milestone by milestone as a scenario awaits them
// (scenarioContext's awaitMilestone); then --wait-seconds awaiting a milestone that never comes, as
// a scenario waits minutes for a recovery. For each phase this process's CPU, its heap and RSS
// after a full collection, and the transitions the recorder stored (and counted as background).
// The cluster boots in a child process and runs as separate daemons: none of its cost is counted.
//
//   npx tsx bench/recorder.ts [--workers 100,300] [--profile large] [--pods-per-node 0]
//       [--own-kwoks 3] [--rest-seconds 60] [--wait-seconds 60] [--label before]
//
// Writes bench/results/recorder-<workers>w-<profile>[-<label>]-<date>.json per size. Only APIs
// the harness had before the recorder was indexed are required, so the same file measures the
// previous code (a checkout of it, --label before). Progress goes to stderr. Not a test: numbers
// vary by machine and load (recorded). Every cluster is torn down, also on failure or Ctrl-C.
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { leaseRenewIntervalMs, timingProfile } from "../lib/cluster/profiles.js";
import { SimCluster } from "../lib/cluster/sim/cluster.js";
import { SimClusterUnderTest } from "../lib/cluster/sim/under-test.js";
import { errorMessage, RekindleError } from "../lib/errors.js";
import { TimelineRecorder } from "../lib/observe/recorder.js";
import { clusterExpectationInputs, defineScenario } from "../lib/scenario/harness.js";
import { scenarioContext } from "../lib/scenario/scenario-context.js";
import type { ScenarioContextParts } from "../lib/scenario/scenario-context-parts.js";
import { ScenarioTimeline } from "../lib/scenario/scenario-timeline.js";
import { ScenarioSteps } from "../lib/scenario/steps.js";
import { LineTail } from "../lib/util/line-tail.js";
import { silentProgress } from "../lib/util/progress.js";
import { sleep } from "../lib/util/time.js";
import { ensureNamespace } from "../lib/workloads/deploy.js";
import { benchSimShape, bootSimInChild, tearDownSim } from "./controller-sim.js";
import { benchMachine } from "./results-file.js";
import { runBench, writeSizeResult } from "./sized-bench.js";
import { memoryAfterGc, startWindow, type WindowUsage } from "./process-window.js";
import { benchProvenance } from "./provenance.js";

const USAGE =
  "npx tsx bench/recorder.ts [--workers 100,300] [--profile large] [--pods-per-node 0] [--own-kwoks 3] [--rest-seconds 60] [--wait-seconds 60] [--label before]";
const ZONES = 3;
const NAMESPACE = "bench-recorder";

function count(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RekindleError(
      "INVALID_INPUT",
      `${flag} ${text}: expected a whole number from ${min} to ${max}`,
      {
        hint: USAGE,
      },
    );
  }
  return value;
}

function options() {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        workers: { type: "string", default: "100,300" },
        profile: { type: "string", default: "large" },
        "pods-per-node": { type: "string", default: "0" },
        "own-kwoks": { type: "string", default: "3" },
        "rest-seconds": { type: "string", default: "60" },
        "wait-seconds": { type: "string", default: "60" },
        label: { type: "string", default: "" },
      },
      strict: true,
    });
  } catch (error) {
    throw new RekindleError("INVALID_INPUT", errorMessage(error), { hint: USAGE });
  }
  const { values } = parsed;
  timingProfile(values.profile); // Refuses an unknown one, naming the valid ones.
  if (!/^[a-z0-9-]*$/.test(values.label)) {
    throw new RekindleError("INVALID_INPUT", `--label ${values.label}: lower-case letters, digits and -`, {
      hint: USAGE,
    });
  }
  return {
    workers: values.workers.split(",").map((w) => count("--workers", w.trim(), ZONES, 1000)),
    profile: values.profile,
    podsPerNode: count("--pods-per-node", values["pods-per-node"], 0, 100),
    ownKwoks: count("--own-kwoks", values["own-kwoks"], 0, 1000),
    restSeconds: count("--rest-seconds", values["rest-seconds"], 5, 3600),
    waitSeconds: count("--wait-seconds", values["wait-seconds"], 0, 3600),
    label: values.label,
  };
}
type Options = ReturnType<typeof options>;

const progress = (message: string) =>
  process.stderr.write(`[bench:recorder ${new Date().toISOString()}] ${message}\n`);

/** What the recorder holds: stored transitions, and (where the code counts the background) counted renewals. */
function held(recorder: TimelineRecorder, timeline: ScenarioTimeline) {
  // Read as optional: the code before the index had neither (see the file comment).
  const counts = (recorder as Partial<Pick<TimelineRecorder, "background">>).background?.();
  const derivations = (timeline as Partial<Pick<ScenarioTimeline, "derivations">>).derivations;
  return {
    storedTransitions: recorder.transitions.length,
    storedLeaseRenewals: recorder.transitions.filter((t) => t.name === "lease-renewed").length,
    ...(counts
      ? {
          countedLeaseRenewals: Object.values(counts.nodes).reduce((s, n) => s + n.leaseRenewals, 0),
          countedNodeHeartbeats: Object.values(counts.nodes).reduce((s, n) => s + n.nodeHeartbeats, 0),
          promotedNodes: counts.promoted.length,
        }
      : {}),
    ...(derivations !== undefined ? { milestoneDerivations: derivations } : {}),
  };
}

/** A phase: this process's CPU over it, memory after a full collection at its end, what is held. */
async function phase<T>(
  recorder: TimelineRecorder,
  timeline: ScenarioTimeline,
  run: () => Promise<T>,
): Promise<
  { result: T; usage: WindowUsage; afterGc: { rssMB: number; heapUsedMB: number } } & ReturnType<typeof held>
> {
  const window = startWindow();
  const result = await run();
  const usage = window.stop();
  return { result, usage, afterGc: memoryAfterGc(), ...held(recorder, timeline) };
}

function withoutResult<T extends { result: unknown }>(measured: T): Omit<T, "result"> {
  const { result: _result, ...rest } = measured;
  return rest;
}

const definition = defineScenario({
  id: "bench/recorder",
  title: "the recorder and milestone waiting through one node loss",
  requires: ["lifecycle"],
  expected: () => [],
  workloads: () => [],
  recoveryOf: [],
  run: () => Promise.resolve(),
});

/** The node to lose: the last worker (with many workers, one of a shared kwok). */
function lostNode(cluster: SimCluster): string {
  const nodes = cluster.nodeNames();
  const node = nodes[nodes.length - 1];
  if (node === undefined) throw new RekindleError("PRECONDITION", "the sim cluster has no workers");
  return node;
}

async function measureSize(
  workers: number,
  opts: Options,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const shape = benchSimShape("rec", "recorder", workers, ZONES, {
    ...opts,
    ownKwoks: Math.min(opts.ownKwoks, workers),
  });
  const bootStartedAt = Date.now();
  progress(`${workers} workers: booting the sim cluster (profile ${opts.profile})`);
  try {
    await bootSimInChild(shape, signal);
    const bootMs = Date.now() - bootStartedAt;
    const cluster = SimCluster.open(shape.root);
    const given = new SimClusterUnderTest(cluster, { keep: true });
    const kc = given.kubeConfig();
    await given.settle(signal);
    await ensureNamespace(kc, NAMESPACE, cluster.runId);
    const before = memoryAfterGc();
    const startedAt = Date.now();
    const recorder = await TimelineRecorder.start(kc, { namespaces: [NAMESPACE], countBackground: true });
    const startMs = Date.now() - startedAt;
    try {
      const inputs = clusterExpectationInputs(given);
      const timeline = new ScenarioTimeline(definition, NAMESPACE, inputs, undefined);
      timeline.recorder = recorder;
      const parts: ScenarioContextParts<"lifecycle"> = {
        definition,
        given,
        cluster: given,
        kc,
        steps: new ScenarioSteps(definition.id, silentProgress),
        namespace: NAMESPACE,
        inputs,
        signal,
        progress: silentProgress,
        timeline,
        expected: [],
        recoveryOf: undefined,
        nominal: [],
        controllerTail: new LineTail(8),
        faultPhaseSpreadMs: 0,
      };
      const context = scenarioContext(parts);
      progress(
        `${workers} workers: up in ${Math.round(bootMs / 1000)} s; recorder started in ${startMs} ms; at rest ${opts.restSeconds} s`,
      );
      const rest = await phase(recorder, timeline, () => sleep(opts.restSeconds * 1000, signal));
      const node = lostNode(cluster);
      progress(`${workers} workers: at rest ${rest.usage.cpuPercentOfOneCore} % of a core; losing ${node}`);
      const lifecycle = given.capabilities.lifecycle;
      const loss = await phase(recorder, timeline, async () => {
        context.faultStarts([node]);
        await lifecycle.stopNode(node);
        const unknown = await context.awaitMilestone("node-ready-unknown", 300_000);
        await lifecycle.startNode(node);
        const again = await context.awaitMilestone("node-ready-again", 300_000);
        return { node, nodeReadyUnknownMs: unknown.atMs, nodeReadyAgainMs: again.atMs };
      });
      progress(
        `${workers} workers: node loss ${loss.usage.cpuPercentOfOneCore} % of a core; waiting ${opts.waitSeconds} s`,
      );
      // A milestone that never comes (no VolumeAttachment on a node of this bench), awaited as a
      // scenario awaits a recovery that takes minutes.
      const waiting = await phase(recorder, timeline, async () => {
        if (opts.waitSeconds === 0) return "skipped";
        return context
          .awaitMilestone("va-gone", opts.waitSeconds * 1000)
          .then(() => "came")
          .catch(() => "timed out as intended");
      });
      progress(`${workers} workers: waiting ${waiting.usage.cpuPercentOfOneCore} % of a core`);
      return {
        workers,
        zones: ZONES,
        podsPerNode: opts.podsPerNode,
        ownKwoks: shape.ownKwoks,
        label: opts.label || "current",
        runs: { rest: 1, nodeLoss: 1, waiting: opts.waitSeconds > 0 ? 1 : 0 },
        bootMs,
        leaseRenewIntervalMs: leaseRenewIntervalMs(timingProfile(opts.profile)),
        beforeRecorder: before,
        recorderStartMs: startMs,
        rest: { seconds: opts.restSeconds, ...withoutResult(rest) },
        nodeLoss: { ...loss.result, ...withoutResult(loss) },
        waiting: { seconds: opts.waitSeconds, outcome: waiting.result, ...withoutResult(waiting) },
        relists: recorder.relists,
      };
    } finally {
      await recorder.stop();
    }
  } finally {
    await tearDownSim(shape, progress);
  }
}

const NOTES = [
  "The recorder and the milestone waiting run in the bench process (tsx: TypeScript transformed in process, client-node and lib/ loaded: beforeRecorder is that process before the recorder starts). The sim cluster boots in a child process and runs as separate daemons: none of its cost is counted.",
  "rest: the recorder alone, no fault yet. nodeLoss: faultStarts, the last worker stopped, node-ready-unknown awaited, the worker started, node-ready-again awaited (scenarioContext's awaitMilestone, as a scenario awaits). waiting: a milestone that never comes awaited for the given seconds, as a scenario waits minutes for a recovery.",
  "afterGc: the process after a full collection at the end of each phase. storedTransitions: what the recorder keeps one by one; countedLeaseRenewals (current code): renewals of nodes nothing concerns, counted per zone and minute instead; milestoneDerivations (current code): how often the milestones were derived from the transitions (the previous code derived them on every 100 ms poll).",
];

const provenance = benchProvenance();
await runBench("bench:recorder", async (signal) => {
  const opts = options();
  for (const workers of opts.workers) {
    const startedAt = Date.now();
    const loadAtStart = Math.round((loadavg()[0] ?? 0) * 10) / 10;
    const measured = await measureSize(workers, opts, signal);
    const result = {
      ...provenance,
      machine: benchMachine(),
      profile: opts.profile,
      loadAverageAtStart: loadAtStart,
      ...measured,
      totalMs: Date.now() - startedAt,
      notes: NOTES,
    };
    const label = opts.label === "" ? "" : `-${opts.label}`;
    await writeSizeResult(
      `recorder-${workers}w-${opts.profile}${label}-${provenance.date}.json`,
      result,
      progress,
    );
  }
});
