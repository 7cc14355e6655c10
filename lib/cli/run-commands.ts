// `rekindle run`, `rekindle list` and `rekindle compare`.
import { parseArgs } from "node:util";
import { timingProfile, TIMING_PROFILE_NAMES } from "../cluster/profiles.js";
import { expectedNodeLoss, expectedNodeLossWithController, nominalWindows } from "../expect/model.js";
import { scenarioControllerConfig } from "../scenario/node-loss.js";
import { compareSummaries, formatComparison, parsePercent, readSummary } from "../report/compare.js";
import { PROVIDERS, runConformance, SUITE_FAMILIES } from "../run/runner.js";
import { RekindleError } from "../errors.js";
import { parseCount } from "./args.js";

export const RUN_USAGE = `rekindle run [--provider ${PROVIDERS.join("|")}] [--suite ${SUITE_FAMILIES.join("|")}]... [--profile ${TIMING_PROFILE_NAMES.join("|")}]
             [--scenario TEXT] [--repeat N] [--report-dir D] [--keep-cluster] [--no-html]
      run the conformance suites; reports in reports/<run-id>/ (summary.json, junit.xml, charts/, allure-report/)
      defaults: --provider sim, every suite, --profile default, --repeat 1
rekindle list [--profile P]
      the scenarios and their expected timelines
rekindle compare <baseline summary.json> <new summary.json> [--max-regression 20%]
      milestone-by-milestone comparison; exits 1 on a regression`;

export async function runCommandLine(args: string[], signal: AbortSignal): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      provider: { type: "string" },
      suite: { type: "string", multiple: true },
      profile: { type: "string" },
      repeat: { type: "string" },
      "report-dir": { type: "string" },
      "keep-cluster": { type: "boolean", default: false },
      "no-html": { type: "boolean", default: false },
      scenario: { type: "string" },
    },
    strict: true,
  });
  const result = await runConformance({
    ...(values.provider !== undefined ? { provider: values.provider } : {}),
    ...(values.suite !== undefined ? { suites: values.suite } : {}),
    ...(values.profile !== undefined ? { profile: values.profile } : {}),
    ...(values.repeat !== undefined ? { repeat: parseCount("--repeat", values.repeat) } : {}),
    ...(values["report-dir"] !== undefined ? { reportDir: values["report-dir"] } : {}),
    keepCluster: values["keep-cluster"],
    allureHtml: !values["no-html"],
    ...(values.scenario !== undefined ? { grep: values.scenario } : {}),
    signal,
  });
  process.stdout.write(
    `\nrekindle run ${result.summary.runId} (${result.summary.provider}, profile ${result.summary.profile})\n`,
  );
  for (const s of result.summary.scenarios) {
    const recovery =
      s.recoveryMs === null ? "not recovered" : `recovered in ${(s.recoveryMs / 1000).toFixed(1)}s`;
    process.stdout.write(`  ${s.outcome === "passed" ? "PASS" : "FAIL"}  ${s.id}  (${recovery})\n`);
  }
  process.stdout.write(`reports: ${result.reportDir}\n`);
  const passed = result.summary.scenarios.filter((s) => s.outcome === "passed").length;
  process.stdout.write(`scenarios: ${passed} passed, ${result.summary.scenarios.length - passed} failed\n`);
  return result.failed > 0 ? 1 : 0;
}

export function listCommand(args: string[]): number {
  const { values } = parseArgs({
    args,
    options: { profile: { type: "string", default: "default" } },
    strict: true,
  });
  const profile = timingProfile(values.profile);
  for (const mode of ["baseline", "manual-out-of-service", "controller"] as const) {
    const controller = scenarioControllerConfig(profile, undefined);
    const expected =
      mode === "controller"
        ? expectedNodeLossWithController({
            profile,
            controller: {
              unhealthyAfterMs: controller.unhealthyAfterMs,
              checkIntervalMs: controller.checkIntervalMs,
              fenceMs: controller.checkIntervalMs * 2,
              cleanupMs: controller.detachGraceMs + controller.checkIntervalMs * 2,
            },
          })
        : expectedNodeLoss({ profile, mode });
    const anchors: Record<string, number> = { "fault-injected": 0 };
    process.stdout.write(`node-loss/${mode}  (profile ${profile.name})\n`);
    for (const w of nominalWindows(expected, anchors)) {
      const why = expected.find((e) => e.name === w.name)?.why ?? "";
      const window =
        w.maxMs === null
          ? `never (after ${(w.minMs / 1000).toFixed(0)}s)`
          : `${(w.minMs / 1000).toFixed(0)}–${(w.maxMs / 1000).toFixed(0)}s`;
      process.stdout.write(`  ${w.name.padEnd(48)} ${window.padEnd(22)} ${why}\n`);
    }
    const pending = expected.filter((e) => !nominalWindows(expected, anchors).some((w) => w.name === e.name));
    for (const e of pending) {
      process.stdout.write(
        `  ${e.name.padEnd(48)} +${(e.minMs / 1000).toFixed(0)}–${e.maxMs === null ? "∞" : (e.maxMs / 1000).toFixed(0)}s after ${e.after}\n`,
      );
    }
    process.stdout.write("\n");
  }
  return 0;
}

export function compareCommand(args: string[]): number {
  const { values, positionals } = parseArgs({
    args,
    options: { "max-regression": { type: "string", default: "20%" } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 2) {
    throw new RekindleError(
      "INVALID_INPUT",
      `rekindle compare takes two summary.json paths, got ${positionals.length}`,
      {
        hint: "rekindle compare reports/<old>/summary.json reports/<new>/summary.json [--max-regression 20%]",
      },
    );
  }
  const [baselinePath = "", currentPath = ""] = positionals;
  const threshold = parsePercent(values["max-regression"]);
  const rows = compareSummaries(readSummary(baselinePath), readSummary(currentPath), {
    maxRegression: threshold,
  });
  process.stdout.write(`${formatComparison(rows)}\n`);
  const regressions = rows.filter((r) => r.regression);
  process.stdout.write(
    `\n${regressions.length === 0 ? "no regression" : `${regressions.length} regression(s)`} beyond ${(threshold * 100).toFixed(1)}%\n`,
  );
  return regressions.length === 0 ? 0 : 1;
}
