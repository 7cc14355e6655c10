// `rekindle run`'s choice between one cluster and several: `--parallel N|auto` as given (1 is a
// serial run), and by default, on the sim, as many clusters as `auto` gives (parallel-count.ts:
// the machine's cores and memory and the selection's lengths; one cluster runs serially). Any
// other provider, and a run that keeps its cluster, runs serially.
import type { ProviderName } from "../cluster/provider.js";
import { consoleProgress } from "../util/progress.js";
import { parseParallel, type ParallelChoice } from "./parallel-count.js";
import { runParallel } from "./parallel-run.js";
import { planRun } from "./run-plan.js";
import { runConformance, type RunOptions, type RunResult } from "./runner.js";

/** The layout when --parallel was not given: side by side on the sim unless the cluster is kept. */
export function defaultLayout(provider: ProviderName, keepCluster: boolean): ParallelChoice {
  return provider === "sim" && !keepCluster ? "auto" : 1;
}

export async function runSerialOrParallel(
  options: RunOptions,
  parallel: string | undefined,
): Promise<RunResult> {
  if (parallel !== undefined) {
    // Parsed before anything starts: bad input is exit 2 with nothing left behind.
    const choice = parseParallel(parallel);
    return choice === 1 ? runConformance(options) : runParallel(options, choice);
  }
  const { provider } = (await planRun(options, options.progress ?? consoleProgress())).cluster;
  const chosen: RunOptions = { ...options, provider };
  const choice = defaultLayout(provider, options.keepCluster === true);
  return choice === 1 ? runConformance(chosen) : runParallel(chosen, choice, true);
}
