// Which runs a calibration may pool: runs of one provider and one profile, made by one build of
// rekindle (the same git sha, clean), unless the shas are listed explicitly. A scenario's runs
// from several files pool only while it expects the same milestones; anything else is refused,
// naming the file, rather than silently dropping or mixing runs (the committed table once mixed
// sim pressure runs from before and after an eviction-manager fix).
import { RekindleError } from "../lib/errors.js";
import type { ScenarioRun, SummaryExpected } from "../lib/report/summary.js";

/**
 * What a calibration reads of a summary.json: a full one, or the trimmed copy kept under
 * bench/results/calibration/ (calibration-raw.ts), which keeps just these fields.
 */
export interface CalibrationSummary {
  runId: string;
  provider: string;
  profile: string;
  environment?: { rekindle?: { gitSha: string | null; gitDirty: boolean | null } };
  scenarios: readonly { id: string; expected: readonly SummaryExpected[]; runs: readonly ScenarioRun[] }[];
}

export interface CalibrationInput {
  /** Where the summary came from, for messages. */
  file: string;
  summary: CalibrationSummary;
}

export interface PoolOptions {
  /**
   * Git shas (full, or a prefix of at least 7 hex digits) whose runs may pool with each other.
   * Default none: all files of a provider must share one sha. Runs of a dirty checkout or without
   * a recorded sha never pool with other files unless "unrecorded" is listed.
   */
  poolShas?: readonly string[];
  /**
   * Runs left out, each `<scenario id>@<run id>`: that scenario's runs in that summary, superseded
   * by later runs after a change to the scenario's mechanism. Each must name a scenario the summary
   * has. Default none.
   */
  exclude?: readonly string[];
}

export interface PooledScenario {
  id: string;
  /** What the scenario expects (names, and which are forbidden), to refuse pooling changed scenarios. */
  shape: string;
  runs: ScenarioRun[];
}

export interface PooledRuns {
  provider: string;
  profile: string;
  runIds: string[];
  /** The builds the runs came from: a git sha, or "unrecorded" (schema 1, no git, or a dirty tree). */
  shas: string[];
  /** The `<scenario id>@<run id>` left out (PoolOptions.exclude) of this provider's files. */
  excluded: string[];
  scenarios: PooledScenario[];
}

/** The sha a summary was made at, or "unrecorded" when it cannot say which build that was. */
export function buildOf(summary: CalibrationSummary): string {
  const rekindle = summary.environment?.rekindle;
  if (!rekindle?.gitSha || rekindle.gitDirty !== false) return "unrecorded";
  return rekindle.gitSha;
}

function listed(sha: string, poolShas: readonly string[]): boolean {
  return poolShas.some((p) => (p === "unrecorded" ? sha === p : p.length >= 7 && sha.startsWith(p)));
}

function expectationShape(s: CalibrationSummary["scenarios"][number]): string {
  return JSON.stringify(s.expected.map((e) => [e.name, e.maxMs === null]));
}

function refuse(message: string, hint: string): RekindleError {
  return new RekindleError("INVALID_INPUT", message, { hint });
}

/** Pools the files of one provider, or throws INVALID_INPUT naming the file that cannot pool. */
export function poolRuns(
  inputs: readonly CalibrationInput[],
  provider: string,
  options: PoolOptions = {},
): PooledRuns {
  const poolShas = options.poolShas ?? [];
  const exclude = new Set(options.exclude ?? []);
  const excluded: string[] = [];
  const first = inputs[0];
  if (!first) throw refuse(`no ${provider} summaries given`, `pass --${provider} <summary.json>`);
  const byId = new Map<string, PooledScenario>();
  const shas: string[] = [];
  for (const { file, summary } of inputs) {
    if (summary.provider !== provider) {
      throw refuse(
        `${file}: a ${summary.provider} run, given as ${provider}`,
        `pass it with --${summary.provider}`,
      );
    }
    if (summary.profile !== first.summary.profile) {
      throw refuse(
        `${file}: profile ${summary.profile}, but ${first.file} is ${first.summary.profile}`,
        "calibrate one profile at a time",
      );
    }
    const sha = buildOf(summary);
    if (!shas.includes(sha)) shas.push(sha);
    if (shas.length > 1 && !shas.every((s) => listed(s, poolShas))) {
      throw refuse(
        `${file}: made at ${sha}, but other ${provider} files were made at ${shas.filter((s) => s !== sha).join(", ")}`,
        'runs pool only at one clean git sha; list the builds that may pool with --pool-shas <sha>,<sha> ("unrecorded" for runs without one)',
      );
    }
    for (const s of summary.scenarios) {
      const key = `${s.id}@${summary.runId}`;
      if (exclude.has(key)) {
        excluded.push(key);
        continue;
      }
      const shape = expectationShape(s);
      const earlier = byId.get(s.id);
      if (earlier && earlier.shape !== shape) {
        throw refuse(
          `${file}: scenario ${s.id} expects other milestones than in an earlier ${provider} file`,
          "the scenario changed between the runs; pool only runs of one version of it",
        );
      }
      byId.set(s.id, { id: s.id, shape, runs: [...(earlier?.runs ?? []), ...s.runs] });
    }
  }
  const ownRunIds = new Set(inputs.map((i) => i.summary.runId));
  const unknown = [...exclude].filter(
    (e) => ownRunIds.has(e.slice(e.lastIndexOf("@") + 1)) && !excluded.includes(e),
  );
  if (unknown.length > 0) {
    throw refuse(
      `--exclude ${unknown.join(", ")}: no such scenario in that ${provider} run`,
      "name a scenario the run has, as <scenario id>@<run id>",
    );
  }
  return {
    provider,
    profile: first.summary.profile,
    runIds: inputs.map((i) => i.summary.runId),
    shas,
    excluded,
    scenarios: [...byId.values()],
  };
}
