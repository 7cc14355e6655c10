// `npm run test:integration`: the integration files in the order test/support/shard-plan.ts gives,
// the families run alone first, then the rest in shards side by side (REKINDLE_TEST_SHARDS, default
// 2; 1 runs them one after another). A shard's output is printed whole when it ends, with a line
// of progress every minute before that; the closing line adds up every process's counts, and
// reports/test-durations/integration.json holds every file's wall time.
// Arguments run one plain mocha instead: test files (`test/integration/x.test.ts`) in place of
// them all, and mocha's own flags (`--grep TEXT`).
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lastGateSeconds, planShards } from "./shard-plan.js";

const MOCHA = ["node_modules/.bin/mocha", "--config", ".mocharc.integration.cjs"];
const PROGRESS_EVERY_MS = 60_000;
const children = new Set<ChildProcess>();

interface Outcome {
  label: string;
  code: number;
  passed: number;
  failed: number;
  skipped: number;
}

function shardCount(): number {
  const raw = process.env["REKINDLE_TEST_SHARDS"] ?? "2";
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 4) {
    process.stderr.write(`REKINDLE_TEST_SHARDS=${raw}: give a whole number from 1 to 4 (default 2)\n`);
    process.exit(2);
  }
  return n;
}

/** Runs mocha on `files` as `label`; `buffered`: output to a log, printed whole at the end. */
function runMocha(label: string, files: string[], buffered: boolean): Promise<Outcome> {
  const env = { ...process.env, REKINDLE_TEST_FILES: files.join(" "), REKINDLE_TEST_LABEL: label };
  const logPath = join("reports", "test-logs", `${label}.log`);
  mkdirSync(join("reports", "test-logs"), { recursive: true });
  const log = createWriteStream(logPath);
  const child = spawn(process.execPath, MOCHA, { env, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  let text = "";
  const take = (chunk: Buffer): void => {
    text += chunk.toString();
    log.write(chunk);
    if (!buffered) process.stdout.write(chunk);
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  const timer = buffered
    ? setInterval(() => {
        const done = (text.match(/✔/g) ?? []).length;
        const failing = (text.match(/^\s+\d+\) /gm) ?? []).length;
        process.stdout.write(`integration: ${label} running (${done} passed, ${failing} failed so far)\n`);
      }, PROGRESS_EVERY_MS)
    : undefined;
  return new Promise((resolve) => {
    child.once("close", (code, signal) => {
      children.delete(child);
      if (timer) clearInterval(timer);
      log.end();
      if (buffered) process.stdout.write(`\nintegration: == ${label} (${files.length} files)\n${text}`);
      const m = new RegExp(`^${label}: (\\d+) passed, (\\d+) failed(?:, (\\d+) skipped)?$`, "m").exec(text);
      resolve({
        label,
        code: code ?? (signal ? 128 : 1),
        passed: Number(m?.[1] ?? 0),
        failed: Number(m?.[2] ?? (m ? 0 : 1)),
        skipped: Number(m?.[3] ?? 0),
      });
    });
  });
}

/** Joins the processes' reports/test-durations/<label>.json into integration.json. */
function joinDurations(labels: string[], startedAt: Date): { file: string; ms: number }[] {
  const dir = join("reports", "test-durations");
  const files = labels.flatMap((label) => {
    try {
      const body = JSON.parse(readFileSync(join(dir, `${label}.json`), "utf8")) as {
        files: { file: string; ms: number }[];
      };
      return body.files;
    } catch {
      return [];
    }
  });
  files.sort((a, b) => b.ms - a.ms);
  const body = {
    label: "integration",
    startedAt: startedAt.toISOString(),
    totalMs: Date.now() - startedAt.getTime(),
    files,
  };
  writeFileSync(join(dir, "integration.json"), `${JSON.stringify(body, null, 2)}\n`);
  return files;
}

for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
] as const)
  process.once(signal, () => {
    // Each mocha process undoes its own clusters on SIGTERM; wait for them, then exit.
    for (const child of children) child.kill("SIGTERM");
    const wait = setInterval(() => {
      if (children.size === 0) process.exit(code);
    }, 200);
    wait.unref();
  });

const passThrough = process.argv.slice(2);
if (passThrough.length > 0) {
  const files = passThrough.filter((a) => a.endsWith(".test.ts"));
  const flags = passThrough.filter((a) => !files.includes(a));
  const env = files.length > 0 ? { ...process.env, REKINDLE_TEST_FILES: files.join(" ") } : process.env;
  const child = spawn(process.execPath, [...MOCHA, ...flags], { env, stdio: "inherit" });
  children.add(child);
  child.once("close", (code) => process.exit(code ?? 1));
} else {
  const started = new Date();
  const dir = join("test", "integration");
  const files = readdirSync(dir)
    .filter((n) => n.endsWith(".test.ts"))
    .map((n) => join(dir, n));
  const plan = planShards({
    files,
    sourceOf: (f) => readFileSync(f, "utf8"),
    seconds: lastGateSeconds(join("bench", "results")),
    shardCount: shardCount(),
  });
  process.stdout.write(
    `integration: ${plan.alone.length} files alone first (the families run), then ${plan.shards.length} shard(s) side by side:\n` +
      plan.shards.map((s, i) => `  shard ${i + 1}: ${s.join(" ")}\n`).join(""),
  );
  const outcomes: Outcome[] = [];
  if (plan.alone.length > 0) outcomes.push(await runMocha("integration-alone", plan.alone, false));
  const side = plan.shards.length > 1;
  outcomes.push(
    ...(await Promise.all(plan.shards.map((s, i) => runMocha(`integration-shard-${i + 1}`, s, side)))),
  );
  const slowest = joinDurations(
    outcomes.map((o) => o.label),
    started,
  ).slice(0, 10);
  process.stdout.write(
    `\nintegration: the slowest files\n` +
      slowest.map((f) => `  ${(f.ms / 1000).toFixed(1).padStart(7)} s  ${f.file}\n`).join(""),
  );
  const sum = (k: "passed" | "failed" | "skipped"): number => outcomes.reduce((s, o) => s + o[k], 0);
  const tookS = Math.round((Date.now() - started.getTime()) / 1000);
  for (const o of outcomes)
    process.stdout.write(`  ${o.label}: ${o.passed} passed, ${o.failed} failed (exit ${o.code})\n`);
  const skipped = sum("skipped");
  process.stdout.write(
    `integration took ${Math.floor(tookS / 60)} min ${String(tookS % 60).padStart(2, "0")} s\n` +
      `\nintegration: ${sum("passed")} passed, ${sum("failed")} failed${skipped ? `, ${skipped} skipped` : ""}\n`,
  );
  process.exit(outcomes.every((o) => o.code === 0) ? 0 : 1);
}
