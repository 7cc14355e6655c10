// Measurement: what the sim's hostile-condition knobs do to nodes, read from the API and from
// kube-controller-manager's log, at a timing profile. One cluster (3 workers, 2 zones):
//   1. worker-1's kubelet clock set --offset behind, slewed (the default), observed for the time
//      to reach the offset plus the grace period plus three renewals, then cleared;
//   2. worker-2's clock stepped back by the same offset, observed as long;
//   3. kube-apiserver paused for --pause (default: the grace period + 10 s), observed 30 s after.
// Usage: npx tsx bench/sim-hostile.ts [--profile fast] [--offset -30s] [--pause 20s]
// Prints what it saw and writes bench/results/sim-hostile-<profile>-<date>.json. Not a test.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { leaseRenewIntervalMs, timingProfile } from "../lib/cluster/profiles.js";
import { SimCluster } from "../lib/cluster/sim/cluster.js";
import { k8s } from "../lib/kube/client.js";
import { parseKlogLine } from "../lib/observe/klog.js";
import { TimelineRecorder } from "../lib/observe/recorder.js";
import type { Transition } from "../lib/observe/types.js";
import { parseDurationMs, parseSignedDurationMs } from "../lib/util/duration.js";
import { PROJECT_ROOT } from "../lib/util/project-files.js";
import { consoleProgress } from "../lib/util/progress.js";
import { pollUntil, sleep } from "../lib/util/time.js";
import { benchProvenance } from "./provenance.js";

const { values } = parseArgs({
  options: {
    profile: { type: "string", default: "fast" },
    offset: { type: "string", default: "-30s" },
    pause: { type: "string" },
  },
});
const provenance = benchProvenance();
const profile = timingProfile(values.profile);
const offsetMs = parseSignedDurationMs(values.offset, "--offset");
const graceMs = profile.nodeMonitorGracePeriodSeconds * 1000;
const renewMs = leaseRenewIntervalMs(profile);
const pauseMs = values.pause === undefined ? graceMs + 10_000 : parseDurationMs(values.pause, "--pause");

/** What the node lifecycle controller logged about nodes, from kube-controller-manager's log. */
const NLC_LINES =
  /unresponsive|healthy again|disruption mode|Recording status change|Updating ready status of pod|Evicting|taint/i;

interface Observation {
  what: string;
  startedAt: string;
  durationMs: number;
  /** Ready condition changes and taints, per node, ms from the start. */
  nodeChanges: { atMs: number; node: string; change: string }[];
  /** The node lifecycle controller's own lines, ms from the start. */
  controllerLog: { atMs: number; message: string; node?: string }[];
  extra: Record<string, unknown>;
}

const cluster = await SimCluster.start({
  name: `bench-hostile-${values.profile}`,
  root: join(PROJECT_ROOT, "reports", "bench", `sim-hostile-${values.profile}`),
  workers: 3,
  zones: 2,
  profile,
  progress: consoleProgress(),
});
const kc = cluster.kubeConfig();
const leases = kc.makeApiClient(k8s.CoordinationV1Api);
const renewTimeMs = async (node: string): Promise<number> => {
  const lease = await leases.readNamespacedLease({ name: node, namespace: "kube-node-lease" });
  return lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : 0;
};

function nodeChanges(transitions: readonly Transition[], from: number): Observation["nodeChanges"] {
  return transitions
    .filter((t) => t.atMs >= from && t.node !== undefined)
    .filter(
      (t) =>
        (t.name === "node-condition" && t.detail?.["type"] === "Ready") ||
        t.name === "taint-added" ||
        t.name === "taint-removed",
    )
    .map((t) => ({
      atMs: t.atMs - from,
      node: t.node ?? "",
      change:
        t.name === "node-condition"
          ? `Ready=${t.detail?.["status"] ?? "?"}`
          : `${t.name} ${t.detail?.["key"] ?? ""}:${t.detail?.["effect"] ?? ""}`,
    }));
}

function controllerLog(from: number, to: number): Observation["controllerLog"] {
  return readFileSync(cluster.controllerManagerLogPath, "utf8")
    .split("\n")
    .flatMap((line) => {
      const entry = parseKlogLine(line);
      if (!entry || entry.atMs < from || entry.atMs > to || !NLC_LINES.test(entry.message)) return [];
      const node = entry.fields["node"]?.replace(/"/g, "");
      return [{ atMs: entry.atMs - from, message: entry.message, ...(node ? { node } : {}) }];
    });
}

async function observe(
  what: string,
  act: (recorder: TimelineRecorder) => Promise<Record<string, unknown>>,
): Promise<Observation> {
  const recorder = await TimelineRecorder.start(kc, { namespaces: ["default"] });
  const start = Date.now();
  process.stderr.write(`\n== ${what}\n`);
  try {
    const extra = await act(recorder);
    const end = Date.now();
    return {
      what,
      startedAt: new Date(start).toISOString(),
      durationMs: end - start,
      nodeChanges: nodeChanges(recorder.transitions, start),
      controllerLog: controllerLog(start, end),
      extra,
    };
  } finally {
    await recorder.stop();
  }
}

/** Local receive intervals between the node's Lease renewals in the recorder, once steady. */
function renewalIntervals(transitions: readonly Transition[], node: string, from: number): number[] {
  const times = transitions
    .filter((t) => t.name === "lease-renewed" && t.node === node && t.atMs >= from)
    .map((t) => t.atMs);
  return times.slice(1).map((t, i) => t - (times[i] ?? t));
}

async function skewObservation(node: string, step: boolean): Promise<Observation> {
  return observe(
    `${node}: kubelet clock ${offsetMs / 1000}s, ${step ? "stepped" : "slewed"}`,
    async (recorder) => {
      const setAt = Date.now();
      await cluster.setClockSkew(node, { offsetMs, step });
      const reached = await pollUntil(
        async () =>
          Date.now() - (await renewTimeMs(node)) >= Math.abs(offsetMs) - 500 ? Date.now() : undefined,
        { what: `${node} ${offsetMs / 1000}s behind`, timeoutMs: Math.abs(offsetMs) + 10 * renewMs + 30_000 },
      );
      const steadyFrom = Date.now();
      await sleep(graceMs + 3 * renewMs);
      const lagMs = Date.now() - (await renewTimeMs(node));
      const intervals = renewalIntervals(recorder.transitions, node, steadyFrom);
      await cluster.setClockSkew(node, undefined);
      await pollUntil(
        async () => (Date.now() - (await renewTimeMs(node)) < renewMs + 2_000 ? true : undefined),
        {
          what: `${node} true again`,
          timeoutMs: 4 * renewMs + 10_000,
        },
      );
      return {
        reachedOffsetAfterMs: reached - setAt,
        lagAtEndMs: lagMs,
        steadyRenewalIntervalsMs: intervals,
      };
    },
  );
}

async function pauseObservation(): Promise<Observation> {
  return observe(`kube-apiserver paused ${pauseMs / 1000}s (grace ${graceMs / 1000}s)`, async () => {
    await cluster.pauseApiServer(pauseMs);
    await sleep(30_000);
    return { pauseMs };
  });
}

const observations: Observation[] = [];
try {
  await cluster.waitForNodesReady();
  observations.push(await skewObservation("worker-1", false));
  observations.push(await skewObservation("worker-2", true));
  await cluster.waitForNodesReady();
  observations.push(await pauseObservation());
} finally {
  await cluster.destroy();
}

for (const o of observations) {
  process.stdout.write(`\n${o.what} (${(o.durationMs / 1000).toFixed(1)} s observed)\n`);
  process.stdout.write(`  ${JSON.stringify(o.extra)}\n`);
  for (const c of o.nodeChanges)
    process.stdout.write(`  +${(c.atMs / 1000).toFixed(1)}s ${c.node} ${c.change}\n`);
  for (const l of o.controllerLog)
    process.stdout.write(`  +${(l.atMs / 1000).toFixed(1)}s [kcm] ${l.message} ${l.node ?? ""}\n`);
}
const result = {
  ...provenance,
  // Each condition is observed once.
  repeat: 1,
  machine: { cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
  profile: values.profile,
  offsetMs,
  observations,
};
const dir = join(PROJECT_ROOT, "bench", "results");
mkdirSync(dir, { recursive: true });
const file = join(dir, `sim-hostile-${values.profile}-${new Date().toISOString().slice(0, 10)}.json`);
writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
process.stdout.write(`\nwritten: ${file}\n`);
