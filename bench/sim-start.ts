// Benchmark: cached start time of a sim cluster and the resident memory of its processes.
// Usage: npx tsx bench/sim-start.ts [--repeat 3] [--workers 3] [--profile fast]
// Prints a table and writes bench/results/sim-start-<date>.json. Not a test: numbers vary by machine.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { timingProfile } from "../lib/cluster/profiles.js";
import { SimCluster } from "../lib/cluster/sim/cluster.js";
import { ensureSimBinaries } from "../lib/build/sim-binaries.js";
import { statsOf } from "../lib/report/summary.js";
import { PROJECT_ROOT } from "../lib/util/fixtures.js";
import { consoleProgress } from "../lib/util/progress.js";
import { sleep } from "../lib/util/time.js";
import { benchProvenance } from "./provenance.js";

function rssMiB(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Math.round(Number(match[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

const { values } = parseArgs({
  options: {
    repeat: { type: "string", default: "3" },
    workers: { type: "string", default: "3" },
    profile: { type: "string", default: "fast" },
  },
});
const repeat = Number(values.repeat);
const workers = Number(values.workers);
const profile = timingProfile(values.profile);
const provenance = benchProvenance();
await ensureSimBinaries({ progress: consoleProgress() });
const startMs: number[] = [];
const memory: Record<string, number[]> = {};
for (let i = 0; i < repeat; i++) {
  const t0 = Date.now();
  await using cluster = await SimCluster.start({
    name: `bench-${i}`,
    root: join(PROJECT_ROOT, "reports", "bench", `sim-start-${i}`),
    workers,
    zones: 2,
    profile,
  });
  startMs.push(Date.now() - t0);
  await sleep(15_000); // let memory settle after boot
  const state = cluster.state;
  for (const c of state.components) (memory[c.name] ??= []).push(rssMiB(c.pid));
  const kwok = state.nodes.reduce((sum, n) => sum + (n.process ? rssMiB(n.process.pid) : 0), 0);
  (memory[`kwok × ${workers} workers`] ??= []).push(kwok);
}
const result = {
  ...provenance,
  machine: { cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
  profile: values.profile,
  workers,
  repeat,
  startMs: statsOf(startMs),
  rssMiB: Object.fromEntries(Object.entries(memory).map(([k, v]) => [k, statsOf(v)])),
  controlPlaneRssMiBp50: ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"].reduce(
    (s, k) => s + (memory[k] ? statsOf(memory[k]).p50 : 0),
    0,
  ),
};
mkdirSync(join(PROJECT_ROOT, "bench", "results"), { recursive: true });
const out = join(PROJECT_ROOT, "bench", "results", `sim-start-${new Date().toISOString().slice(0, 10)}.json`);
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
console.log(
  `start of a ${workers}-worker cluster (cached binaries), ${repeat} runs: p50 ${result.startMs.p50} ms, max ${result.startMs.max} ms`,
);
for (const [name, s] of Object.entries(result.rssMiB))
  console.log(`  RSS ${name.padEnd(26)} p50 ${s.p50} MiB, max ${s.max} MiB`);
console.log(
  `  control plane (etcd + apiserver + KCM + scheduler) p50 total: ${result.controlPlaneRssMiBp50} MiB`,
);
console.log(`written to ${out}`);
