// Benchmark: the gate (`bash .ci/run`, which runs `npm ci` and `npm test`) as CI runs it, in a fresh
// clone of this checkout's HEAD, warm (this machine's caches) or cold (empty build, module and
// image caches of its own). Records each stage's time (scripts/test.sh's "took" lines), each
// layer's counts and each test file's wall time (test/support/totals-reporter.cjs) in
// bench/results/gate-<label>-<date>.json.
// Usage: npx tsx bench/gate.ts --label NAME [--cold] [--conditions TEXT] [--keep]
// Commit first: the clone is of HEAD (a dirty tree is recorded as such but not cloned). Not a test.
import { spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { PROJECT_ROOT } from "../lib/util/project-files.js";
import { benchProvenance } from "./provenance.js";
import { benchMachine, writeResultsFile } from "./results-file.js";

const { values } = parseArgs({
  options: {
    label: { type: "string" },
    cold: { type: "boolean", default: false },
    conditions: { type: "string" },
    keep: { type: "boolean", default: false },
  },
});
if (values.label === undefined || !/^[a-z0-9][a-z0-9-]*$/.test(values.label)) {
  console.error(
    "--label NAME is required: lower-case letters, digits and dashes (it names the results file)",
  );
  process.exit(2);
}
const label = values.label;

/** Runs `command` in `cwd`, its output teed to `log`; resolves with its exit code and output. */
function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  log: string,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const file = createWriteStream(log);
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const take = (chunk: Buffer) => {
      output += chunk.toString();
      file.write(chunk);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.once("error", reject);
    child.once("close", (code) => {
      file.end();
      resolve({ code, output });
    });
  });
}

/** "3 min 04 s" → ms. */
function tookMs(text: string): number {
  const m = /(\d+) min (\d+) s/.exec(text);
  return m === null ? Number.NaN : (Number(m[1]) * 60 + Number(m[2])) * 1000;
}

const provenance = benchProvenance();
const work = mkdtempSync(join(tmpdir(), `rekindle-bench-gate-${label}-`));
const clone = join(work, "clone");
const log = join(work, "ci.log");
await run("git", ["clone", "-q", PROJECT_ROOT, clone], work, process.env, join(work, "clone.log"));
const env: NodeJS.ProcessEnv = { ...process.env, CI: "true" };
if (values.cold) {
  // Empty caches of the run's own: the sim binaries, the kind images (the private engine's data
  // root lives in the cache), Go's modules and build cache, npm's package cache.
  for (const [key, dir] of [
    ["REKINDLE_CACHE_DIR", "rekindle-cache"],
    ["GOMODCACHE", "go-mod"],
    ["GOCACHE", "go-build"],
    ["npm_config_cache", "npm-cache"],
  ] as const)
    env[key] = join(work, dir);
}
console.log(`gate ${label}${values.cold ? " (cold)" : ""}: ${clone}, log ${log}`);
const started = performance.now();
const { code, output } = await run("bash", [".ci/run"], clone, env, log);
const totalMs = Math.round(performance.now() - started);

const stagesMs: Record<string, number> = {};
for (const m of output.matchAll(/^test: == (\S+) took (.+)$/gm))
  stagesMs[(m[1] ?? "").replace(/^test:/, "")] = tookMs(m[2] ?? "");
const counts = [
  ...output.matchAll(/^(unit|integration|full): (\d+) passed, (\d+) failed(?:, (\d+) skipped)?$/gm),
];
const files: Record<string, unknown> = {};
for (const layer of ["unit", "integration", "full"]) {
  const path = join(clone, "reports", "test-durations", `${layer}.json`);
  if (existsSync(path)) files[layer] = (JSON.parse(readFileSync(path, "utf8")) as { files: unknown }).files;
}
const outcome =
  `${code === 0 ? "passed" : `failed (exit ${String(code)})`}: ` +
  (counts.map((m) => `${m[1] ?? ""} ${m[2] ?? ""} passed, ${m[3] ?? ""} failed`).join("; ") || "no counts");
const result = {
  ...provenance,
  machine: benchMachine(),
  runs: 1,
  rows: [
    {
      run: `${values.cold ? "cold" : "warm"} .ci/run in a fresh clone`,
      gitSha: provenance.gitSha,
      outcome,
      totalMs,
      stagesMs,
      conditions: values.conditions ?? (values.cold ? "empty caches of its own" : "this machine's caches"),
      files,
    },
  ],
};
const out = join(PROJECT_ROOT, "bench", "results", `gate-${label}-${provenance.date}.json`);
await writeResultsFile(out, result);
console.log(`${outcome}; ${Math.round(totalMs / 60_000)} min; written to ${out}`);
if (!values.keep) rmSync(work, { recursive: true, force: true });
process.exit(code === 0 ? 0 : 1);
