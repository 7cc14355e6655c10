// `npm run bench:controller` (issue 25 item 8): the recovery controller on sim clusters of the
// sizes given. For each: its CPU and RSS at rest and during incidents, the API requests and bytes
// per second it causes at rest (LIST and WATCH apart: reads at rest should come from watches only),
// and its detection-to-decision latency for one node lost (several runs) and for a zone outage of
// a third of the nodes (zone-a of 3 zones). First (unless --no-shipped) the shipped controller,
// compiled and in its own process, is measured at rest alone (controller-shipped.ts). Then the
// controller runs in this process (its requests are counted, its CPU and RSS read); the cluster
// boots in a child process and runs as separate daemons (controller-sim.ts), so their cost is not
// the controller's.
//
//   npx tsx bench/controller.ts [--workers 100,300] [--pods-per-node 20] [--profile large]
//       [--own-kwoks 3] [--single-losses 3] [--warmup 15] [--rest-seconds 310]
//       [--controller-args='--unhealthy-after 20s'] [--no-zone-outage] [--no-shipped] [--node-flags='--max-semi-space-size=1']
//
// Writes bench/results/controller-<workers>w-<date>.json per size. Not a test: numbers vary by
// machine and load (recorded). Progress goes to stderr; the controller's log to
// reports/bench/controller-<workers>w.log. Every cluster is torn down, also on failure or Ctrl-C.
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { CONTROLLER_USAGE } from "../lib/cli/controller-command.js";
import { controllerSettings, parseControllerFlags } from "../lib/controller/flags.js";
import { leaseRenewIntervalMs, timingProfile } from "../lib/cluster/profiles.js";
import { SimCluster } from "../lib/cluster/sim/cluster.js";
import { SIM_POWER_LOSS_NOTICE_MS } from "../lib/cluster/sim/fence-driver.js";
import { kwokProcesses } from "../lib/cluster/sim/boot/state.js";
import { errorMessage, RekindleError } from "../lib/errors.js";
import { PROJECT_ROOT } from "../lib/util/project-files.js";
import { parseCountIn } from "../lib/util/parse-count.js";
import { sleep } from "../lib/util/time.js";
import { ControllerEvents } from "./controller-events.js";
import {
  runIncident,
  waitForObserved,
  type IncidentContext,
  type IncidentResult,
} from "./controller-incident.js";
import { benchSimShape, bootSimInChild, simController, tearDownSim } from "./controller-sim.js";
import { benchMachine } from "./results-file.js";
import { runBench, writeSizeResult } from "./sized-bench.js";
import { summarizeDecisions } from "./decisions.js";
import { groupUsage } from "./process-usage.js";
import { measureRest, memoryAfterGc } from "./process-window.js";
import { buildDist, measureShippedAtRest, type ShippedRest } from "./controller-shipped.js";
import { benchProvenance } from "./provenance.js";
import { shippedControllerSettings } from "../lib/controller/shipped-deployment.js";
import { installRequestCounter } from "./request-counter.js";

interface Options {
  workers: number[];
  podsPerNode: number;
  profile: string;
  ownKwoks: number;
  singleLosses: number;
  warmupSeconds: number;
  restSeconds: number;
  controllerArgs: string[];
  zoneOutage: boolean;
  /** Measure the shipped controller (compiled, its own process) at rest first. */
  shipped: boolean;
  /** Node/V8 flags of the shipped controller's process. Default: deploy/controller/deployment.yaml's command's. */
  nodeFlags: string[];
}

/** The shipped controller's warm-up before its rest window: its watches listed and settled. */
const SHIPPED_WARMUP_SECONDS = 30;

const USAGE =
  "npx tsx bench/controller.ts [--workers 100,300] [--pods-per-node 20] [--profile large] [--own-kwoks 3] [--single-losses 3] [--warmup 15] [--rest-seconds 310] [--controller-args='--no-early-power-read'] [--no-zone-outage] [--no-shipped] [--node-flags=<node flags of the shipped controller; default: deployment.yaml's command's>]";

/** A third of the workers share a zone: zone-a of three. */
const ZONES = 3;
const OUTAGE_ZONE = "zone-a";

/** node:util's parseArgs, its refusals as bad input (exit 2) with the usage. */
function parseFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new RekindleError("INVALID_INPUT", errorMessage(error), { hint: USAGE });
  }
}

/** `rekindle controller`'s flags, checked before any cluster boots. */
function checkedControllerArgs(text: string): string[] {
  const args = text.split(/\s+/).filter((a) => a !== "");
  try {
    controllerSettings(parseControllerFlags(["--sim-cluster", "checked", ...args]));
  } catch (error) {
    if (error instanceof RekindleError) throw error;
    throw new RekindleError("INVALID_INPUT", `--controller-args: ${errorMessage(error)}`, {
      hint: CONTROLLER_USAGE,
    });
  }
  return args;
}

function options(): Options {
  const { values } = parseFlags({
    options: {
      workers: { type: "string", default: "100,300" },
      "pods-per-node": { type: "string", default: "20" },
      profile: { type: "string", default: "large" },
      "own-kwoks": { type: "string", default: "3" },
      "single-losses": { type: "string", default: "3" },
      warmup: { type: "string", default: "15" },
      // One full period of the 5-minute status report sim nodes sent until 2026-11-26 (a fleet booted
      // together reported within the same 10 s, so a shorter window held that burst of Node events
      // or missed it); they send none now (deploy/sim/kwok/node-stages.yaml), and the window
      // stays as long so results remain comparable.
      "rest-seconds": { type: "string", default: "310" },
      "controller-args": { type: "string", default: "" },
      "no-zone-outage": { type: "boolean", default: false },
      "no-shipped": { type: "boolean", default: false },
      "node-flags": { type: "string" },
    },
    strict: true,
  });
  const workers = values.workers
    .split(",")
    .map((w) => parseCountIn("--workers", w.trim(), { min: ZONES, max: 1000 }));
  timingProfile(values.profile); // Refuses an unknown one, naming the valid ones.
  return {
    workers,
    podsPerNode: parseCountIn("--pods-per-node", values["pods-per-node"], { min: 0, max: 100 }),
    profile: values.profile,
    ownKwoks: parseCountIn("--own-kwoks", values["own-kwoks"], { min: 0, max: Math.min(...workers) }),
    singleLosses: parseCountIn("--single-losses", values["single-losses"], { min: 0, max: 50 }),
    warmupSeconds: parseCountIn("--warmup", values.warmup, { min: 0, max: 600 }),
    restSeconds: parseCountIn("--rest-seconds", values["rest-seconds"], { min: 5, max: 3600 }),
    controllerArgs: checkedControllerArgs(values["controller-args"]),
    zoneOutage: !values["no-zone-outage"],
    shipped: !values["no-shipped"],
    nodeFlags:
      values["node-flags"] === undefined
        ? shippedControllerSettings().nodeFlags
        : values["node-flags"].split(" ").filter((f) => f !== ""),
  };
}

/** The controller flags in a results file's name ("-no-early-power-read"), so runs with other flags keep their own file. */
function argsSlug(args: readonly string[]): string {
  const slug = args
    .join("-")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return slug === "" ? "" : `-${slug}`;
}

const progress = (message: string) =>
  process.stderr.write(`[bench:controller ${new Date().toISOString()}] ${message}\n`);
const counter = installRequestCounter();

/** The nodes of one-node losses: workers with filler pods (shared kwok) outside the outage zone, spread over the rest. */
function singleLossNodes(cluster: SimCluster, count: number): string[] {
  const nodes = cluster.status().nodes.filter((n) => n.zone !== OUTAGE_ZONE);
  const fleet = nodes.filter((n) => n.group !== undefined);
  const pool = fleet.length >= count ? fleet : nodes;
  return count === 0 ? [] : pool.slice(-count).map((n) => n.name);
}

/** CPU (cores) and RSS (MiB) of the sim's own processes over `run`. */
async function simUsageOver<T>(
  cluster: SimCluster,
  run: () => Promise<T>,
): Promise<{ result: T; sim: Record<string, { cores: number; rssMiB: number }> }> {
  const state = cluster.state;
  const parts: [string, number[]][] = [
    ...state.components.map((c): [string, number[]] => [c.name, [c.pid]]),
    ["kwoks", kwokProcesses(state).map((p) => p.pid)],
  ];
  const leaders = parts.flatMap(([, pids]) => pids);
  const before = groupUsage(leaders);
  const startedAt = performance.now();
  const result = await run();
  const seconds = (performance.now() - startedAt) / 1000;
  const after = groupUsage(leaders);
  const sum = (pids: number[], f: (p: number) => number) => pids.reduce((s, p) => s + f(p), 0);
  const sim = Object.fromEntries(
    parts.map(([name, pids]) => [
      name,
      {
        cores:
          Math.round(
            (sum(pids, (p) => (after.get(p)?.cpuSeconds ?? 0) - (before.get(p)?.cpuSeconds ?? 0)) / seconds) *
              1000,
          ) / 1000,
        rssMiB: Math.round(sum(pids, (p) => after.get(p)?.rssMiB ?? 0)),
      },
    ]),
  );
  return { result, sim };
}

/** The one-node losses, then the zone outage (its fences leave zone-a's nodes without their pods). */
async function incidents(
  context: IncidentContext,
  workers: number,
  opts: Options,
): Promise<{ singles: IncidentResult[]; outage: IncidentResult | undefined }> {
  const { cluster } = context;
  const singles: IncidentResult[] = [];
  for (const [i, node] of singleLossNodes(cluster, opts.singleLosses).entries()) {
    singles.push(
      await runIncident(context, `one node lost (${i + 1}/${opts.singleLosses}: ${node})`, [node]),
    );
    progress(
      `${workers} workers: ${node} decided ${JSON.stringify(singles.at(-1)?.decisions[0] ?? "never")}`,
    );
  }
  const outageNodes = cluster
    .status()
    .nodes.filter((n) => n.zone === OUTAGE_ZONE)
    .map((n) => n.name);
  const outage = opts.zoneOutage
    ? await runIncident(context, `zone outage (${OUTAGE_ZONE}, ${outageNodes.length} nodes)`, outageNodes)
    : undefined;
  if (outage) progress(`${workers} workers: zone outage ${JSON.stringify(outage.summary)}`);
  return { singles, outage };
}

/** The shipped controller alone at rest (controller-shipped.ts), before the in-process one starts. */
async function shippedAtRest(
  workers: number,
  root: string,
  opts: Options,
  signal: AbortSignal,
): Promise<ShippedRest> {
  const shipped = await measureShippedAtRest({
    root,
    controllerArgs: opts.controllerArgs,
    nodeFlags: opts.nodeFlags,
    warmupSeconds: SHIPPED_WARMUP_SECONDS,
    restSeconds: opts.restSeconds,
    logFile: join(PROJECT_ROOT, "reports", "bench", `controller-${workers}w-shipped.log`),
    signal,
    progress: (line) => progress(`${workers} workers: ${line}`),
  });
  progress(
    `${workers} workers: the shipped controller at rest ${shipped.cpuPercentOfOneCore} % of a core, RSS ${shipped.rssMB} MB (peak ${shipped.peakRssMB} MB)`,
  );
  return shipped;
}

async function measureSize(
  workers: number,
  opts: Options,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const shape = benchSimShape("ctl", "controller", workers, ZONES, opts);
  const loadAtStart = Math.round((loadavg()[0] ?? 0) * 10) / 10;
  const bootStartedAt = Date.now();
  progress(
    `${workers} workers: booting the sim cluster (${opts.podsPerNode} pods per shared-kwok worker, profile ${opts.profile})`,
  );
  try {
    await bootSimInChild(shape, signal);
    const bootMs = Date.now() - bootStartedAt;
    await using cluster = SimCluster.open(shape.root);
    const logFile = join(PROJECT_ROOT, "reports", "bench", `controller-${workers}w.log`);
    const shipped = opts.shipped ? await shippedAtRest(workers, shape.root, opts, signal) : undefined;
    const { kc, controller, config, logLines } = await simController(
      shape.root,
      opts.controllerArgs,
      logFile,
    );
    // This process before the controller runs (its modules loaded): what the controller adds is above it.
    const before = memoryAfterGc();
    await using _controller = controller;
    controller.start();
    const rules = {
      unhealthyAfterMs: config.unhealthyAfterMs,
      checkIntervalMs: config.checkIntervalMs,
      powerLossNoticeMs: SIM_POWER_LOSS_NOTICE_MS,
    };
    const events = new ControllerEvents(kc);
    await using _events = events;
    const timeouts = {
      decisionsMs: config.unhealthyAfterMs + config.nodeMonitorGracePeriodMs + 60_000,
      fencedMs: 120_000,
      restoredMs: 300_000,
    };
    const context: IncidentContext = {
      cluster,
      kc,
      controller,
      events,
      logLines,
      rules,
      timeouts,
      progress,
      signal,
    };
    progress(
      `${workers} workers: up in ${Math.round(bootMs / 1000)} s; controller started, waiting until it has seen every node renew`,
    );
    await waitForObserved(context, timeouts.restoredMs);
    await sleep(opts.warmupSeconds * 1000, signal);
    progress(`${workers} workers: measuring the controller at rest for ${opts.restSeconds} s`);
    memoryAfterGc();
    const rest = await simUsageOver(cluster, () => measureRest(counter, opts.restSeconds, signal));
    // What the controller keeps, its garbage collected (RSS in the window includes garbage not yet collected).
    const restAfterGc = memoryAfterGc();
    progress(
      `${workers} workers: at rest ${rest.result.cpuPercentOfOneCore} % of a core, RSS ${rest.result.rssMB} MB, LIST ${rest.result.requestsPerSecond.LIST}/s, WATCH ${rest.result.requestsPerSecond.WATCH}/s, ${rest.result.bytesPerSecond} B/s`,
    );
    // Started after the rest window: its own requests and CPU are not the controller's at rest.
    await events.start();
    const { singles, outage } = await incidents(context, workers, opts);
    return {
      workers,
      zones: ZONES,
      podsPerNode: opts.podsPerNode,
      ownKwoks: opts.ownKwoks,
      runs: { rest: 1, singleLoss: singles.length, zoneOutage: outage ? 1 : 0 },
      loadAverageAtStart: loadAtStart,
      bootMs,
      controller: {
        flags: opts.controllerArgs,
        unhealthyAfterMs: config.unhealthyAfterMs,
        checkIntervalMs: config.checkIntervalMs,
        earlyPowerRead: config.earlyPowerRead,
        nodeMonitorGracePeriodMs: config.nodeMonitorGracePeriodMs,
        maxUnhealthy: config.maxUnhealthy,
      },
      leaseRenewIntervalMs: leaseRenewIntervalMs(timingProfile(opts.profile)),
      rest: {
        warmupSeconds: opts.warmupSeconds,
        rssBeforeControllerMB: before.rssMB,
        heapUsedBeforeControllerMB: before.heapUsedMB,
        ...rest.result,
        afterGc: restAfterGc,
        simProcesses: rest.sim,
        ...(shipped ? { shipped } : {}),
      },
      singleLoss: {
        summary: summarizeDecisions(
          singles.flatMap((s) => s.lost),
          singles.flatMap((s) => s.decisions),
        ),
        incidents: singles,
      },
      ...(outage ? { zoneOutage: { zone: OUTAGE_ZONE, ...outage } } : {}),
    };
  } finally {
    await tearDownSim(shape, progress);
  }
}

const NOTES = [
  "The controller runs in the bench process: CPU and RSS are that process's (the controller plus the bench's bookkeeping: during incidents also its Event watch and its sim calls). The sim cluster boots in a child process and runs as separate daemons: none of its cost is counted as the controller's (simProcesses shows it).",
  "Decision = the first of the node's NodeUnhealthy/FenceStarted or hold Events (FenceGuardHeld, FenceHeld*, FenceRateLimited, NothingToRelease), timed when this bench's watch received it (after the Event's POST and the watch's delivery: an upper bound). fromRenewalMs runs from the Lease's last renewTime. Each decision names its rule: unhealthy-after (silence; threshold unhealthyAfter), missed-renewal-read (the driver read the power off at a missed renewal; threshold the missed-renewal time, renewal interval + max(10 %, 2 checks)) or power-loss-notice (read off on the driver's notice, as the controller's log says; threshold the moment the sim recorded the stop in its state file, which its driver watches (a zone outage's batch is recorded once, after its last stop), plus the driver's 800 ms notice delay). afterThresholdMs is the Event's receipt past that threshold; decidedInProcessAfterThresholdMs the controller's own log line of the decision (a hold, a fence start or nothing to release) past it, before the Event's write; eventAfterDecidedMs the time between the two (the Event's POST, 16 at once in the background, and this bench's watch).",
  "One-node losses stop a worker with filler pods outside zone-a; the zone outage stops every worker of zone-a (a third of 3 zones) in one batch, 16 label patches at once (stopSpreadMs: from the first stop to the last). Requests at rest are counted by kind: WATCH, LIST (a GET of a collection), GET (one object), WRITE.",
  "The bench runs under tsx (TypeScript transformed in process), which with client-node and the rest of lib/ loaded accounts for rssBeforeControllerMB: a compiled controller in a pod starts smaller. afterGc is the process after a full collection at the end of the rest window: what the controller keeps.",
  "poweredOnAgain (per incident) lists nodes the bench powered on a second time: the controller fenced them after their return because their Lease stayed silent past unhealthyAfter (a shared kwok re-taking hundreds of returned nodes on a loaded machine renews some late); an operator would power them on, and the next incident starts calm.",
  "rest.shipped is the shipped controller measured first, alone: `node bin/rekindle.js controller --sim-cluster` running the compiled dist/ of this tree (built by the bench) as its own process, CPU and RSS read from /proc over the same rest window after a 30 s warm-up; it exits before the in-process controller starts.",
];

const provenance = benchProvenance();
await runBench("bench:controller", async (signal) => {
  const opts = options();
  if (opts.shipped) {
    progress("building dist/ (the shipped controller is measured compiled)");
    await buildDist(signal);
  }
  for (const workers of opts.workers) {
    const startedAt = Date.now();
    const measured = await measureSize(workers, opts, signal);
    const result = {
      ...provenance,
      machine: benchMachine(),
      profile: opts.profile,
      ...measured,
      /** The whole measurement of this size, boot and teardown included. */
      totalMs: Date.now() - startedAt,
      notes: NOTES,
    };
    const file = `controller-${workers}w${argsSlug(opts.controllerArgs)}-${provenance.date}.json`;
    await writeSizeResult(file, result, progress);
  }
});
