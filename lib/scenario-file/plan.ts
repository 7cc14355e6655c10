// What `rekindle run -f` settles before anything starts: the files loaded and validated, one
// cluster for all of them (their cluster sections must agree), the provider and profile (the
// command line's, the files', or the defaults), and what the provider cannot do, refused.
import type { ProviderName } from "../cluster/provider.js";
import type { TimingProfile } from "../cluster/profiles.js";
import { RekindleError } from "../errors.js";
import { loadScenarioFiles } from "./load.js";
import { providerRefusal } from "./provider-refusal.js";
import { clusterProfile, KUBELET_KNOBS } from "./profile.js";
import type { ClusterSpec, ScenarioFile } from "./types.js";

export interface FilePlanOptions {
  /** --provider, if given (it must agree with the files'). */
  provider?: string;
  /** --profile, if given (it must agree with the files'). */
  profile?: string;
  /** --repeat, if given: overrides every file's `repeat`. */
  repeat?: number;
}

export interface FilePlan {
  files: ScenarioFile[];
  /** The provider the files or the command line name; undefined: rekindle chooses (kind, else sim). */
  provider: ProviderName | undefined;
  /** The profile with the files' knob overrides. */
  profile: TimingProfile;
  cluster: ClusterSpec;
  /** Runs of each file's scenario. */
  repeats: ReadonlyMap<string, number>;
  /** The most runs of any file's scenario (summary.json's `repeat`). */
  maxRepeat: number;
}

/** The sim's default cluster shape (lib/cluster/create.ts): a file that says it asks for no other cluster. */
const DEFAULT_WORKERS = 3;
const DEFAULT_ZONES = 2;

/** Two cluster sections ask for the same cluster: equal once the default shape is filled in. */
function same(a: ClusterSpec, b: ClusterSpec): boolean {
  const shaped = (c: ClusterSpec) => {
    const workers = c.workers ?? DEFAULT_WORKERS;
    return JSON.stringify({ ...c, workers, zones: c.zones ?? Math.min(DEFAULT_ZONES, workers) });
  };
  return shaped(a) === shaped(b);
}

/** One cluster runs every file: their cluster sections must be the same. */
function agreedCluster(files: readonly ScenarioFile[]): ClusterSpec {
  const [first, ...rest] = files;
  if (first === undefined)
    throw new RekindleError("INVALID_INPUT", "no scenario file given", { hint: "rekindle run -f FILE|DIR" });
  for (const other of rest) {
    if (!same(first.cluster, other.cluster)) {
      throw new RekindleError(
        "INVALID_INPUT",
        `${first.path} and ${other.path} ask for different clusters (spec.cluster differs); one run has one cluster`,
        { hint: "give them the same spec.cluster, or run them with separate `rekindle run -f` commands" },
      );
    }
  }
  return first.cluster;
}

function agreed(
  what: string,
  fromFile: string | undefined,
  fromCli: string | undefined,
  file: string,
): string | undefined {
  if (fromFile !== undefined && fromCli !== undefined && fromFile !== fromCli) {
    throw new RekindleError(
      "INVALID_INPUT",
      `--${what} ${fromCli} contradicts ${file}'s spec.cluster.${what} ${fromFile}`,
      {
        hint: `drop --${what}, or change the file`,
      },
    );
  }
  return fromFile ?? fromCli;
}

/** Loads and checks the files; throws INVALID_INPUT (exit 2) before anything starts. */
export function planScenarioFiles(paths: readonly string[], options: FilePlanOptions = {}): FilePlan {
  const files = loadScenarioFiles(paths);
  const cluster = agreedCluster(files);
  const where = files[0]?.path ?? "";
  const provider = agreed("provider", cluster.provider, options.provider, where) as ProviderName | undefined;
  const profileName = agreed("profile", cluster.profile, options.profile, where);
  const profile = clusterProfile(cluster, profileName);
  if (provider !== undefined) checkProvider(files, provider);
  const repeats = new Map(files.map((f) => [f.path, options.repeat ?? f.repeat]));
  return { files, provider, profile, cluster, repeats, maxRepeat: Math.max(1, ...repeats.values()) };
}

/** Refuses what the provider cannot do (a fault it cannot inject, a probe on the sim…), naming file and reason. */
export function checkProvider(files: readonly ScenarioFile[], provider: ProviderName): void {
  const reasons = files.flatMap((f) =>
    [...providerRefusal(f, provider), ...unhonoured(f, provider)].map((r) => `${f.path}: ${r}`),
  );
  if (reasons.length > 0) {
    throw new RekindleError(
      "INVALID_INPUT",
      `the ${provider} provider cannot run this:\n  ${reasons.join("\n  ")}`,
      {
        hint: "choose another provider (--provider or spec.cluster.provider), or change the file",
      },
    );
  }
}

/**
 * Eviction thresholds: no provider honours them from the file. The sim's pressure has none to
 * move (its fault meets the signal for the fault's whole duration, and the kubelet's eviction
 * order does not depend on the threshold); a real kubelet reads them from its own config.
 */
function evictionThresholds(file: ScenarioFile, provider: ProviderName): string[] {
  if (file.cluster.knobs?.evictionHard === undefined) return [];
  const why =
    provider === "sim"
      ? "the sim's pressure has no thresholds: its fault meets the signal for the fault's whole duration whatever the threshold, and the kubelet's eviction order does not depend on it, so a threshold would change nothing the sim plays"
      : provider === "kind"
        ? "on kind the kubelet reads it from its own config; set evictionHard in the KubeletConfiguration patch of a kind config (spec.cluster.kindConfig), where rekindle also reads it to size its pressure fill"
        : "on existing the kubelets keep their own evictionHard; rekindle does not change a cluster's kubelet config";
  return [`spec.cluster.knobs.evictionHard: ${why}`];
}

/**
 * What the format takes but this run would not honour, refused before anything starts rather than
 * silently left undone: kubelet knobs and a cluster shape kind reads from its kind config, and
 * eviction thresholds.
 */
function unhonoured(file: ScenarioFile, provider: ProviderName): string[] {
  if (provider === "sim") return evictionThresholds(file, provider);
  const kubeletKnobs = KUBELET_KNOBS.filter((k) => file.cluster.knobs?.[k] !== undefined).map(
    (k) =>
      `spec.cluster.knobs.${k.replace(/Ms$/, "")}: on ${provider} the kubelet reads it from its own config; set it in a kind config (spec.cluster.kindConfig)`,
  );
  const { workers, zones } = file.cluster;
  const shape =
    provider === "kind" &&
    ((workers ?? DEFAULT_WORKERS) !== DEFAULT_WORKERS || (zones ?? DEFAULT_ZONES) !== DEFAULT_ZONES)
      ? [
          `spec.cluster.workers/zones ${workers ?? DEFAULT_WORKERS}/${zones ?? DEFAULT_ZONES}: a kind cluster's nodes and zones come from its kind config (spec.cluster.kindConfig; the default has ${DEFAULT_WORKERS} workers in ${DEFAULT_ZONES} zones)`,
        ]
      : [];
  return [...kubeletKnobs, ...evictionThresholds(file, provider), ...shape];
}
