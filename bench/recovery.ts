// Benchmark: node loss → replacement Ready for a Deployment, a StatefulSet and one with an RWO volume,
// baseline vs release by hand (out-of-service taint, force delete, drain) vs the recovery
// controller, on the sim provider or on a kind cluster rekindle makes (or reuses, by name).
// Usage: npx tsx bench/recovery.ts [--provider sim|kind] [--cluster-name rekindle] [--image auto]
//          [--profile fast|default] [--repeat 5] [--scenario TEXT] [--phase-spread 10000]
// Writes bench/results/recovery-[kind-]<profile>[-<scenario>]-<date>.json and prints p50/max per scenario.
// Each run waits a random time below --phase-spread ms right before its fault (RunSettings.faultPhaseSpreadMs), so
// the losses fall at random phases of the kubelets' 10 s status writes and Lease renewals, as in
// the field: without it five runs on one sim cluster sampled nearly one phase (a mount wait of
// 8.2-8.5 s in one session's five, 1.1-3.7 s in the next one's).
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { RekindleError } from "../lib/errors.js";
import { statsOf } from "../lib/report/summary.js";
import { runConformance } from "../lib/run/runner.js";
import { planRun } from "../lib/run/run-plan.js";
import { PROJECT_ROOT } from "../lib/util/project-files.js";
import { benchProvenance } from "./provenance.js";

const { values } = parseArgs({
  options: {
    provider: { type: "string", default: "sim" },
    "cluster-name": { type: "string" },
    image: { type: "string" },
    profile: { type: "string", default: "fast" },
    repeat: { type: "string", default: "5" },
    scenario: { type: "string" },
    "phase-spread": { type: "string", default: "10000" },
  },
});
const provider = values.provider;
if (provider !== "sim" && provider !== "kind") {
  throw RekindleError.invalidInput("--provider", provider, "sim or kind");
}
// Taken before the run: the sha and tree state the measured code came from.
const provenance = benchProvenance();
const date = provenance.date;
const reportDir = join(PROJECT_ROOT, "reports", `bench-recovery-${values.profile}-${Date.now()}`);
// On one cluster, serially (runConformance), whatever layout the plan would choose.
const plan = await planRun(
  {
    provider,
    "cluster-name": values["cluster-name"],
    image: values.image,
    suite: ["node-loss"],
    profile: values.profile,
    repeat: values.repeat,
    "report-dir": reportDir,
    "no-html": true,
    ...(values.scenario ? { scenario: values.scenario } : {}),
  },
  { faultPhaseSpreadMs: Number(values["phase-spread"]) },
);
const result = await runConformance(plan);
if (result.harnessError !== undefined) throw result.harnessError;
type Run = (typeof result.summary.scenarios)[number]["runs"][number];
/** Per run, `to` minus `from` (runs with both); null when no run has both. */
function between(runs: readonly Run[], from: string, to: string) {
  const spans = runs.flatMap((r) => {
    const at = (name: string) => r.milestones.find((m) => m.name === name)?.atMs;
    const [a, b] = [at(from), at(to)];
    return a === undefined || b === undefined ? [] : [b - a];
  });
  return spans.length === 0 ? null : statsOf(spans);
}
const rows = result.summary.scenarios.map((s) => ({
  scenario: s.id,
  outcome: s.outcome,
  runs: s.runs.length,
  deploymentRecoveredMs: s.stats["deployment:recovered"] ?? null,
  statefulSetRecoveredMs: s.stats["statefulset:recovered"] ?? null,
  plainStatefulSetRecoveredMs: s.stats["statefulset-plain:recovered"] ?? null,
  statefulSetNeverRecovered: s.runs.filter(
    (r) => !r.milestones.some((m) => m.name === "statefulset:recovered"),
  ).length,
  // Where the StatefulSet+PVC's time goes: the release (the out-of-service taint, the old pod
  // gone), the attach on the new node, and the kubelet's part after it (its node-status write
  // reporting the volume in use, then the mount and the container start: docs/controller.md).
  outOfServiceTaintMs: s.stats["taint-added:node.kubernetes.io/out-of-service"] ?? null,
  statefulSetPodGoneMs: s.stats["statefulset:pod-gone"] ?? null,
  statefulSetAttachedElsewhereMs: s.stats["statefulset:va-attached-elsewhere"] ?? null,
  statefulSetRunningAfterAttachMs: between(
    s.runs,
    "statefulset:va-attached-elsewhere",
    "statefulset:replacement-running",
  ),
}));
const out = {
  ...provenance,
  machine: { cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
  provider,
  profile: values.profile,
  repeat: Number(values.repeat),
  faultPhaseSpreadMs: Number(values["phase-spread"]),
  reportDir,
  rows,
};
mkdirSync(join(PROJECT_ROOT, "bench", "results"), { recursive: true });
// A run of some scenarios only is kept beside the full one, not over it.
const subset = values.scenario
  ? `-${values.scenario.replace(/[^a-z0-9]+/gi, "-").replace(/^-|-$/g, "")}`
  : "";
const kind = provider === "kind" ? "kind-" : "";
const file = join(
  PROJECT_ROOT,
  "bench",
  "results",
  `recovery-${kind}${values.profile}${subset}-${date}.json`,
);
writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
const s = (v: { p50: number; max: number } | null) =>
  v ? `p50 ${(v.p50 / 1000).toFixed(1)}s max ${(v.max / 1000).toFixed(1)}s` : "never";
for (const r of rows) {
  console.log(
    `${r.scenario.padEnd(40)} ${r.outcome.padEnd(7)} n=${r.runs}  Deployment ${s(r.deploymentRecoveredMs).padEnd(24)} StatefulSet ${s(r.plainStatefulSetRecoveredMs).padEnd(24)} StatefulSet+PVC ${s(r.statefulSetRecoveredMs)}`,
  );
  if (r.statefulSetAttachedElsewhereMs !== null) {
    console.log(
      `${"".padEnd(49)}out-of-service taint ${s(r.outOfServiceTaintMs)}, old pod gone ${s(r.statefulSetPodGoneMs)}, attached ${s(r.statefulSetAttachedElsewhereMs)}, running ${s(r.statefulSetRunningAfterAttachMs)} after the attach`,
    );
  }
}
console.log(`written to ${file}`);
process.exitCode = result.failed > 0 ? 1 : 0;
