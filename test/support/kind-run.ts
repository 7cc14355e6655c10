// `rekindle run --provider kind` as a user types it, on rekindle's offline node image, for the
// tests that run suites on a real kind cluster (the gate's smoke run and the full kind families):
// what they need from the machine, the run itself, and the check that it left nothing behind.
import { expect } from "chai";
import { execa, type Result } from "execa";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { probeEngine } from "../../lib/cluster/kind/engine.js";
import { INOTIFY_MINIMUMS } from "../../lib/cluster/kind/host-settings.js";
import { ensureNodeImage } from "../../lib/cluster/kind/image/build.js";
import { ensureKindBinary } from "../../lib/build/kind-binary.js";
import type { RunSummary } from "../../lib/report/summary.js";
import { findOnPath } from "../../lib/util/paths.js";
import { consoleProgress } from "../../lib/util/progress.js";
import { expectNoExcuse } from "./excuses.js";
import { HINT, requirePrerequisite } from "./prerequisites.js";
import { allowFor, REKINDLE_BIN } from "./rekindle-run.js";
import { summarySchemaErrors } from "./summary-schema.js";

/** Why a real kind cluster cannot run here, or undefined when it can. */
export async function kindMissing(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return `building the offline node image needs root; ${HINT}`;
  if (findOnPath("mmdebstrap") === undefined) return `no mmdebstrap (Debian package); ${HINT}`;
  const engine = await probeEngine();
  if (engine !== "ok") return `no container engine runs privileged containers (${engine}); ${HINT}`;
  return undefined;
}

/** A cold machine builds the kind CLI and the node image's parts (minutes; cached after). */
const BUILD_MS = 40 * 60_000;

/** Builds (or finds cached) the kind CLI and the offline node image; returns the kind binary. */
export async function prepareKind(context: Mocha.Context): Promise<string> {
  allowFor(context, BUILD_MS);
  const kind = await ensureKindBinary();
  await ensureNodeImage({ progress: consoleProgress() });
  return kind;
}

/** A kind test's `before`: fails (or skips) it when kindMissing says why, else prepareKind. */
export async function kindForTests(context: Mocha.Context): Promise<string> {
  requirePrerequisite(context, await kindMissing());
  return prepareKind(context);
}

/** The host's inotify limits that kind raises for its nodes (they must be as they were after). */
export function inotifyLimits(): Record<string, string> {
  return Object.fromEntries(
    Object.keys(INOTIFY_MINIMUMS).map((name) => [
      name,
      readFileSync(`/proc/sys/${name.replaceAll(".", "/")}`, "utf8").trim(),
    ]),
  );
}

export interface KindRunOptions {
  cluster: string;
  reportDir: string;
  suites?: readonly string[];
  /** `--scenario` pattern. */
  scenario?: string;
  /** Scenario files (`-f`), instead of suites. */
  files?: readonly string[];
  timeoutMs: number;
}

/** `rekindle run` on kind at the fast profile, on rekindle's offline node image: how every kind run here begins. */
export const KIND_FAST_RUN = [
  "run",
  "--provider",
  "kind",
  "--image",
  "rekindle",
  "--profile",
  "fast",
] as const;

/**
 * `rekindle run --provider kind --image rekindle --profile fast ...`. Rejects only when the run's
 * summary lists an excused milestone (the gate allows none: excuses.ts).
 */
export async function runOnKindFast(
  context: Mocha.Context,
  options: KindRunOptions,
): Promise<Result<{ reject: false; timeout: number; all: true }>> {
  const result = await execa(
    process.execPath,
    [
      REKINDLE_BIN,
      ...KIND_FAST_RUN,
      ...(options.suites ?? []).flatMap((suite) => ["--suite", suite]),
      ...(options.scenario !== undefined ? ["--scenario", options.scenario] : []),
      ...(options.files ?? []).flatMap((file) => ["-f", file]),
      "--cluster-name",
      options.cluster,
      "--report-dir",
      options.reportDir,
      "--no-html",
    ],
    { reject: false, timeout: allowFor(context, options.timeoutMs), all: true },
  );
  expectNoExcuse(options.reportDir);
  return result;
}

/**
 * Asserts a kind run exited 0 (printing its output when not) and wrote a kind summary.json valid
 * against docs/summary.schema.json that names the node image by digest; returns the summary.
 */
export function expectKindRunPassed(
  result: { exitCode?: number; all: string },
  reportDir: string,
): RunSummary {
  if (result.exitCode !== 0) console.log(result.all);
  expect(result.exitCode, "rekindle run exit code").to.equal(0);
  const summary = JSON.parse(readFileSync(join(reportDir, "summary.json"), "utf8")) as RunSummary;
  expect(summary.provider).to.equal("kind");
  expect(summarySchemaErrors(summary), "summary.json against docs/summary.schema.json").to.deep.equal([]);
  expect(summary.environment?.nodeImage.digest, "node image digest").to.match(/^sha256:[0-9a-f]{64}$/);
  return summary;
}

/** Asserts the run deleted its cluster and node containers and put the host's limits back. */
export async function expectNothingLeft(
  kind: string,
  cluster: string,
  limitsBefore: Record<string, string>,
): Promise<void> {
  const clusters = await execa(kind, ["get", "clusters"], { reject: false });
  expect(clusters.stdout.split("\n")).not.to.include(cluster);
  const containers = await execa("docker", [
    "ps",
    "-aq",
    "--filter",
    `label=io.x-k8s.kind.cluster=${cluster}`,
  ]);
  expect(containers.stdout.trim(), "node containers left").to.equal("");
  expect(inotifyLimits()).to.deep.equal(limitsBefore);
}

/**
 * A kind run that must pass and leave nothing behind: the host's limits read, runOnKindFast, the
 * summary checked (expectKindRunPassed), then expectNothingLeft. Returns the summary.
 */
export async function passingKindRun(
  context: Mocha.Context,
  kind: string,
  options: KindRunOptions,
): Promise<RunSummary> {
  const before = inotifyLimits();
  const result = await runOnKindFast(context, options);
  const summary = expectKindRunPassed(result, options.reportDir);
  await expectNothingLeft(kind, options.cluster, before);
  return summary;
}
