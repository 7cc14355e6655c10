// Picks and brings up the cluster under test for `rekindle run`: kind when its CLI and a container
// engine answer (real nodes), sim otherwise (real control plane, KWOK workers), or an existing
// cluster from a kubeconfig.
import { join } from "node:path";
import { RekindleError } from "../errors.js";
import { runCommand } from "../util/command.js";
import type { Progress } from "../util/progress.js";
import type { ClusterSpec } from "./cluster-spec.js";
import { ExistingCluster } from "./existing/cluster.js";
import { probeEngine } from "./kind/engine.js";
import { findKindBinary } from "../build/kind-binary.js";
import { startKindCluster } from "./kind/start.js";
import type { TimingProfile } from "./profiles.js";
import { PROVIDER_NAMES, type ClusterUnderTest, type ProviderName } from "./provider.js";
import { SimCluster } from "./sim/cluster.js";
import { SimClusterUnderTest } from "./sim/under-test.js";

/** What every provider's cluster takes besides its spec: the run's timing, files and lifetime. */
export interface ClusterRun {
  profile: TimingProfile;
  /** Where run files go (the sim cluster's state lives under it). */
  runDir: string;
  runId: string;
  /** Leave the cluster running afterwards. */
  keep: boolean;
  progress: Progress;
  signal: AbortSignal;
}

/**
 * Whether kind can run here, and if not, why: a kind CLI (REKINDLE_KIND, PATH or rekindle's cached
 * build) and an engine that runs privileged containers, or the means to run rekindle's private one.
 */
export async function kindAvailable(): Promise<{ available: boolean; why: string }> {
  const binary = findKindBinary();
  if (binary === undefined)
    return { available: false, why: "no kind CLI found (REKINDLE_KIND, PATH, rekindle's cache)" };
  try {
    await runCommand(binary, ["version"], { timeoutMs: 10_000 });
  } catch {
    return { available: false, why: `the kind CLI ${binary} does not run` };
  }
  switch (await probeEngine()) {
    case "ok":
      return {
        available: true,
        why: `kind (${binary}) and a container engine that runs privileged containers`,
      };
    case "privileged-fails":
      return {
        available: true,
        why: `kind (${binary}); privileged containers fail on the default engine, so rekindle's private engine will run them`,
      };
    case "none":
      // No engine of the user's answers: the sim, rather than starting an engine unasked.
      return { available: false, why: "kind is installed but no Docker/Podman engine answers" };
  }
}

export async function chooseProvider(
  requested: string | undefined,
  progress: Progress,
): Promise<ProviderName> {
  if (requested !== undefined) {
    if (!(PROVIDER_NAMES as readonly string[]).includes(requested))
      throw RekindleError.invalidInput("provider", requested, PROVIDER_NAMES);
    progress.detail?.(`provider: ${requested} (--provider)`);
    return requested as ProviderName;
  }
  const kind = await kindAvailable();
  progress.info(`provider: ${kind.available ? "kind" : "sim"} (${kind.why}; choose with --provider)`);
  return kind.available ? "kind" : "sim";
}

export async function openClusterUnderTest(spec: ClusterSpec, run: ClusterRun): Promise<ClusterUnderTest> {
  const { profile, keep, progress, signal } = run;
  switch (spec.provider) {
    case "sim": {
      const { workers, zones, podsPerNode } = spec;
      const cluster = await SimCluster.start({
        name: `run-${run.runId.slice(-6)}`,
        root: join(run.runDir, "cluster"),
        profile,
        workers,
        zones,
        ...(podsPerNode !== undefined ? { podsPerNode } : {}),
        // A kept cluster must survive this process; otherwise it dies with it, even on a crash.
        detach: keep,
        progress,
        signal,
      });
      return new SimClusterUnderTest(cluster, { keep, progress });
    }
    case "kind": {
      const { provider: _kind, ...kind } = spec;
      return startKindCluster({ ...kind, profile, keep, progress, signal });
    }
    case "existing": {
      const { provider: _existing, ...existing } = spec;
      return ExistingCluster.open({ ...existing, profile, progress });
    }
  }
}
