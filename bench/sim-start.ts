// Benchmark: cached start time of a sim cluster, the resident memory of its processes and the CPU
// it takes at rest. Sized by --workers (past 100, shared kwoks: docs/design.md "Large sim clusters").
// Usage: npx tsx bench/sim-start.ts [--repeat 3] [--workers 3] [--zones 2] [--profile fast]
//          [--pods-per-node 0] [--rest-seconds 60] [--own-kwoks K (default: the sim's)]
// Prints a table and writes bench/results/sim-start-<workers>w[-<P>ppn]-<profile>-<date>.json. Not a test:
// numbers vary by machine. Run it niced on a shared machine (nice -n 10).
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { timingProfile } from "../lib/cluster/profiles.js";
import { SimCluster } from "../lib/cluster/sim/cluster.js";
import { validateSimOptions } from "../lib/cluster/sim/boot/options.js";
import { kwokProcesses } from "../lib/cluster/sim/boot/state.js";
import { ensureSimBinaries } from "../lib/build/sim-binaries.js";
import { statsOf } from "../lib/report/summary.js";
import { PROJECT_ROOT } from "../lib/util/project-files.js";
import { consoleProgress } from "../lib/util/progress.js";
import { sleep } from "../lib/util/time.js";
import { groupUsage } from "./process-usage.js";
import { benchProvenance } from "./provenance.js";

const { values } = parseArgs({
  options: {
    repeat: { type: "string", default: "3" },
    workers: { type: "string", default: "3" },
    zones: { type: "string", default: "2" },
    profile: { type: "string", default: "fast" },
    "pods-per-node": { type: "string", default: "0" },
    "rest-seconds": { type: "string", default: "60" },
    "own-kwoks": { type: "string" },
  },
});
const repeat = Number(values.repeat);
const workers = Number(values.workers);
const zones = Number(values.zones);
const podsPerNode = Number(values["pods-per-node"]);
const restSeconds = Number(values["rest-seconds"]);
const ownKwoks = values["own-kwoks"] === undefined ? undefined : Number(values["own-kwoks"]);
const profile = timingProfile(values.profile);
const provenance = benchProvenance();
await ensureSimBinaries({ progress: consoleProgress() });
const CONTROL_PLANE = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"];
const KWOKS = `kwok × ${workers} workers`;
const startMs: number[] = [];
const memory: Record<string, number[]> = {};
const totalRss: number[] = [];
const restCores: Record<string, number[]> = {};
for (let i = 0; i < repeat; i++) {
  const t0 = Date.now();
  await using cluster = await SimCluster.start({
    name: `bench-${i}`,
    root: join(PROJECT_ROOT, "reports", "bench", `sim-start-${i}`),
    workers,
    zones,
    podsPerNode,
    ...(ownKwoks === undefined ? {} : { dedicatedKwoks: ownKwoks }),
    profile,
    progress: consoleProgress(),
  });
  startMs.push(Date.now() - t0);
  await sleep(15_000); // let memory settle after boot
  const state = cluster.state;
  const parts: [string, number[]][] = [
    ...state.components.map((c): [string, number[]] => [c.name, [c.pid]]),
    [KWOKS, kwokProcesses(state).map((p) => p.pid)],
  ];
  const leaders = parts.flatMap(([, pids]) => pids);
  const before = groupUsage(leaders);
  await sleep(restSeconds * 1000);
  const after = groupUsage(leaders);
  let total = 0;
  for (const [name, pids] of parts) {
    const rss = pids.reduce((s, p) => s + (after.get(p)?.rssMiB ?? 0), 0);
    const cpu = pids.reduce(
      (s, p) => s + (after.get(p)?.cpuSeconds ?? 0) - (before.get(p)?.cpuSeconds ?? 0),
      0,
    );
    (memory[name] ??= []).push(Math.round(rss));
    (restCores[name] ??= []).push(Math.round((cpu / restSeconds) * 1000) / 1000);
    total += rss;
  }
  totalRss.push(Math.round(total));
}
/** How many workers had their own kwok (the rest shared): as asked, or the sim's default. */
function cluster0OwnKwoks(): number {
  return ownKwoks ?? validateSimOptions({ workers, zones }).dedicatedKwoks;
}
const sumP50 = (record: Record<string, number[]>, names: readonly string[]) =>
  Math.round(names.reduce((s, k) => s + (record[k] ? statsOf(record[k]).p50 : 0), 0) * 1000) / 1000;
const result = {
  ...provenance,
  machine: { cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
  profile: values.profile,
  workers,
  zones,
  podsPerNode,
  ownKwoks: cluster0OwnKwoks(),
  repeat,
  restSeconds,
  startMs: statsOf(startMs),
  rssMiB: Object.fromEntries(Object.entries(memory).map(([k, v]) => [k, statsOf(v)])),
  totalRssMiB: statsOf(totalRss),
  controlPlaneRssMiBp50: sumP50(memory, CONTROL_PLANE),
  restCores: Object.fromEntries(Object.entries(restCores).map(([k, v]) => [k, statsOf(v)])),
  /** p50 cores at rest of the control plane and the kwoks together (the "whole sim"). */
  simRestCoresP50: sumP50(restCores, [...CONTROL_PLANE, KWOKS]),
};
mkdirSync(join(PROJECT_ROOT, "bench", "results"), { recursive: true });
const day = new Date().toISOString().slice(0, 10);
const filler = podsPerNode > 0 ? `-${podsPerNode}ppn` : "";
const out = join(
  PROJECT_ROOT,
  "bench",
  "results",
  `sim-start-${workers}w${filler}-${values.profile}-${day}.json`,
);
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
console.log(
  `start of a ${workers}-worker cluster in ${zones} zones (cached binaries), ${repeat} runs: p50 ${result.startMs.p50} ms, max ${result.startMs.max} ms`,
);
for (const [name, s] of Object.entries(result.rssMiB))
  console.log(`  RSS ${name.padEnd(26)} p50 ${s.p50} MiB, max ${s.max} MiB`);
console.log(`  RSS total p50 ${result.totalRssMiB.p50} MiB`);
for (const [name, s] of Object.entries(result.restCores))
  console.log(`  at rest ${name.padEnd(22)} p50 ${s.p50} cores`);
console.log(`  at rest, control plane + kwoks p50: ${result.simRestCoresP50} cores`);
console.log(`written to ${out}`);
