// `rekindle run`: boots the provider's cluster, runs the chosen mocha suites against it (Allure
// results + spec output), then writes the reports: summary.json, junit.xml, one SVG timeline per
// scenario and the Allure HTML report. Everything started is stopped again, also on failure.
import AllureMochaReporter from "allure-mocha";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Mocha from "mocha";
import { RekindleError } from "../errors.js";
import { SimCluster } from "../cluster/sim/cluster.js";
import { SimFenceDriver } from "../controller/drivers/sim.js";
import { timingProfile } from "../cluster/profiles.js";
import { writeJunit } from "../report/junit.js";
import { summarizeScenario, writeSummary, type RunSummary } from "../report/summary.js";
import { runCommand } from "../util/command.js";
import { PROJECT_ROOT } from "../util/fixtures.js";
import { consoleProgress, type Progress } from "../util/progress.js";
import { setRunContext, type RunContext } from "./context.js";

export const SUITE_FAMILIES = ["node-loss"] as const;
export const PROVIDERS = ["sim"] as const;

export interface RunOptions {
  /** Default "sim" (the only provider that runs without Docker). */
  provider?: string;
  /** Suite families; default all. */
  suites?: string[];
  /** Timing profile; default "default" (upstream numbers). */
  profile?: string;
  /** Runs of each scenario; default 1. */
  repeat?: number;
  /** Default reports/<run-id>. */
  reportDir?: string;
  /** Leave the cluster running afterwards (prints how to reach and stop it). Default false. */
  keepCluster?: boolean;
  /** Generate the Allure HTML report (needs Java). Default true. */
  allureHtml?: boolean;
  /** Only scenarios whose title matches this regular expression, e.g. "node-loss/(baseline|controller)". Default: all. */
  grep?: string;
  progress?: Progress;
  signal?: AbortSignal;
}

export interface RunResult {
  summary: RunSummary;
  reportDir: string;
  failed: number;
}

function newRunId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\..*$/, "").replace("T", "-");
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

function suiteFile(family: string): string {
  // Compiled runs load dist/suites/*.js; runs from source (tsx) load suites/*.ts.
  const fromSource = import.meta.url.endsWith(".ts");
  return fromSource
    ? join(PROJECT_ROOT, "suites", `${family}.ts`)
    : fileURLToPath(new URL(`../../suites/${family}.js`, import.meta.url));
}

export function validateRunOptions(options: RunOptions): {
  provider: string;
  suites: string[];
  repeat: number;
} {
  const provider = options.provider ?? "sim";
  if (!(PROVIDERS as readonly string[]).includes(provider))
    throw RekindleError.invalidInput("provider", provider, PROVIDERS);
  const suites = options.suites && options.suites.length > 0 ? options.suites : [...SUITE_FAMILIES];
  for (const suite of suites) {
    if (!(SUITE_FAMILIES as readonly string[]).includes(suite))
      throw RekindleError.invalidInput("suite", suite, SUITE_FAMILIES);
  }
  const repeat = options.repeat ?? 1;
  if (!Number.isInteger(repeat) || repeat < 1 || repeat > 100)
    throw RekindleError.invalidInput("repeat count", repeat, "a whole number from 1 to 100");
  timingProfile(options.profile ?? "default");
  return { provider, suites, repeat };
}

export async function runConformance(options: RunOptions = {}): Promise<RunResult> {
  const { provider, suites, repeat } = validateRunOptions(options);
  const profile = timingProfile(options.profile ?? "default");
  const progress = options.progress ?? consoleProgress();
  const signal = options.signal ?? new AbortController().signal;
  const runId = newRunId();
  const reportDir = options.reportDir ?? join(PROJECT_ROOT, "reports", runId);
  mkdirSync(join(reportDir, "charts"), { recursive: true });
  progress.info(
    `rekindle run ${runId}: provider ${provider}, profile ${profile.name}, suites ${suites.join(", ")}, repeat ${repeat}`,
  );
  progress.info(`reports → ${reportDir}`);

  const summary: RunSummary = {
    runId,
    provider,
    profile: profile.name,
    startedAt: new Date().toISOString(),
    repeat,
    scenarios: [],
  };
  const cluster = await SimCluster.start({
    name: `run-${runId.slice(-6)}`,
    root: join(reportDir, "cluster"),
    profile: profile.name,
    workers: 3,
    zones: 2,
    // A kept cluster must survive this process; otherwise it dies with it, even on a crash.
    detach: options.keepCluster === true,
    progress,
    signal,
  });
  const context: RunContext = {
    target: cluster,
    provider,
    repeat,
    progress,
    signal,
    podStartMs: 1000,
    attachMs: 500,
    fenceDriver: new SimFenceDriver(cluster.layout.root),
    scenarios: new Map(),
  };
  let mochaFailures = 0;
  try {
    setRunContext(context);
    const mocha = new Mocha({
      timeout: 0,
      reporter: AllureMochaReporter as unknown as Mocha.ReporterConstructor,
      reporterOptions: { resultsDir: join(reportDir, "allure-results"), extraReporters: "spec" },
      ...(options.grep !== undefined ? { grep: new RegExp(options.grep) } : {}),
    });
    for (const suite of suites) mocha.addFile(suiteFile(suite));
    await mocha.loadFilesAsync();
    mochaFailures = await new Promise<number>((resolve) => {
      const runner = mocha.run((failures) => {
        resolve(failures);
      });
      signal.addEventListener("abort", () => runner.abort(), { once: true });
    });
    mocha.dispose();
  } finally {
    setRunContext(undefined);
    if (options.keepCluster === true) {
      progress.info(
        `cluster kept: KUBECONFIG=${cluster.kubeconfigPath}; stop it with: rekindle sim down --name ${cluster.state.root}`,
      );
    } else {
      await cluster.destroy();
    }
  }

  for (const recorded of context.scenarios.values()) {
    summary.scenarios.push(summarizeScenario(recorded.id, recorded.runs, recorded.expected));
    writeFileSync(join(reportDir, "charts", `${recorded.id.replaceAll("/", "__")}.svg`), recorded.chart);
  }
  summary.finishedAt = new Date().toISOString();
  writeSummary(reportDir, summary);
  writeJunit(reportDir, summary);
  if (options.allureHtml !== false) await generateAllureHtml(reportDir, progress);
  const failed =
    summary.scenarios.filter((s) => s.outcome === "failed").length + (summary.scenarios.length === 0 ? 1 : 0);
  return { summary, reportDir, failed: Math.max(failed, mochaFailures) };
}

/** allure-commandline needs Java; without it the raw allure-results stay and a note says why. */
async function generateAllureHtml(reportDir: string, progress: Progress): Promise<void> {
  const allure = join(PROJECT_ROOT, "node_modules", ".bin", "allure");
  if (!existsSync(allure)) {
    progress.info(
      "allure-commandline is not installed: skipping the HTML report (allure-results/ is written)",
    );
    return;
  }
  const phase = progress.phase("generating the Allure HTML report");
  try {
    await runCommand(
      allure,
      ["generate", join(reportDir, "allure-results"), "-o", join(reportDir, "allure-report"), "--clean"],
      { timeoutMs: 180_000 },
    );
    phase.end(join(reportDir, "allure-report", "index.html"));
  } catch (error) {
    phase.end(`skipped: ${error instanceof Error ? error.message : String(error)} (is Java installed?)`);
  }
}
