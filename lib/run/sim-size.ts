// `rekindle run --workers/--zones/--pods-per-node`: the sim cluster's size from the command line.
// Sim only; a scenario file's spec.cluster says the same or nothing (one run has one cluster).
import { RekindleError } from "../errors.js";
import type { TimingProfile } from "../cluster/profiles.js";
import type { FilePlan } from "../scenario-file/plan.js";
import { scenarioTestTitle, type ScenarioGroup } from "./suite.js";

export interface SimSizeRequest {
  provider?: string | undefined;
  workers?: number | undefined;
  zones?: number | undefined;
  podsPerNode?: number | undefined;
}

const FLAGS = [
  ["workers", "--workers"],
  ["zones", "--zones"],
  ["podsPerNode", "--pods-per-node"],
] as const;

/** Refuses size flags for kind or existing, and a flag that contradicts a scenario file's spec.cluster. */
export function checkSimSize(request: SimSizeRequest, plan: FilePlan | undefined): void {
  const given = FLAGS.filter(([key]) => request[key] !== undefined);
  if (given.length === 0) return;
  const provider = plan?.provider ?? request.provider;
  if (provider !== undefined && provider !== "sim") {
    throw new RekindleError(
      "INVALID_INPUT",
      `${given.map(([, flag]) => flag).join(", ")} size a sim cluster; --provider ${provider} does not take them`,
      { hint: "drop them, or run with --provider sim" },
    );
  }
  for (const [key, flag] of given) {
    const fromFile = plan?.cluster[key];
    if (fromFile !== undefined && fromFile !== request[key]) {
      throw new RekindleError(
        "INVALID_INPUT",
        `${flag} ${String(request[key])} contradicts ${plan?.files[0]?.path ?? "the scenario file"}'s spec.cluster.${key} ${fromFile}`,
        { hint: `drop ${flag}, or change the file` },
      );
    }
  }
  const workers = plan?.cluster.workers ?? request.workers ?? 3;
  const zones = plan?.cluster.zones ?? request.zones;
  if (zones !== undefined && zones > workers) {
    throw new RekindleError(
      "INVALID_INPUT",
      `--zones ${zones} is more than the ${workers} workers; valid: 1 to ${workers}`,
    );
  }
}

/**
 * The sim workers the selected scenarios need (ScenarioDefinition.minWorkers, the most of them),
 * when every selected scenario names its size and one needs more than the default 3; undefined:
 * the default. A selection that mixes in scenarios written for the default 3 workers in 2 zones
 * keeps that layout (their budgets and zones assume it): the larger ones are skipped, saying why.
 * `grep` selects as --scenario does (mocha's full title, "<group> <id> — <title>").
 */
export function scenarioWorkers(
  groups: readonly ScenarioGroup[],
  profile: TimingProfile,
  grep?: string,
): number | undefined {
  const pattern = grep === undefined ? undefined : new RegExp(grep);
  let most = 3;
  for (const group of groups) {
    for (const { definition } of group.scenarios) {
      if (pattern && !pattern.test(`${group.name} ${scenarioTestTitle(definition)}`)) continue;
      const needs = definition.minWorkers?.(profile);
      if (needs === undefined) return undefined;
      most = Math.max(most, needs);
    }
  }
  return most > 3 ? most : undefined;
}
