// A kind cluster that runs already, for the commands that act on it between runs (`rekindle node
// …`, `rekindle down`): found by name on the engine kind runs on, never created by accident.
import { join } from "node:path";
import { ensureKindBinary, findKindBinary } from "../../build/kind-binary.js";
import { RekindleError } from "../../errors.js";
import { stateRoot } from "../../util/paths.js";
import type { Progress } from "../../util/progress.js";
import type { TimingProfile } from "../profiles.js";
import { KindCli, kindArgs } from "./cli.js";
import { KIND_TIMEOUTS, type KindCluster } from "./cluster.js";
import { ensureKindEngine } from "./engine.js";
import { startKindCluster } from "./start.js";

export interface AttachKindOptions {
  progress: Progress;
  signal?: AbortSignal;
  profile?: TimingProfile;
}

/** The kind CLI on the engine kind runs on (the private one when privileged containers need it). */
async function kindOnItsEngine(options: AttachKindOptions): Promise<KindCli> {
  await ensureKindEngine(options.progress, options.signal);
  const signal = options.signal ? { signal: options.signal } : {};
  return new KindCli({
    binary:
      findKindBinary() ?? (await ensureKindBinary(undefined, { progress: options.progress, ...signal })),
  });
}

/** Refuses a name `kind get clusters` does not list, naming those it does. */
async function mustExist(cli: KindCli, name: string, signal?: AbortSignal): Promise<void> {
  const clusters = await cli.clusters(signal);
  if (!clusters.includes(name))
    throw RekindleError.invalidInput(
      "kind cluster",
      name,
      clusters.length > 0 ? clusters : "none runs (rekindle up --provider kind)",
    );
}

/** The running kind cluster `name`, kept running when this process ends (no storage provisioner). */
export async function attachKindCluster(name: string, options: AttachKindOptions): Promise<KindCluster> {
  await mustExist(await kindOnItsEngine(options), name, options.signal);
  return startKindCluster({
    name,
    keep: true,
    sharedStorage: false,
    ...(options.profile ? { profile: options.profile } : {}),
    progress: options.progress,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/** Deletes the kind cluster `name` (it must exist). */
export async function deleteKindCluster(name: string, options: AttachKindOptions): Promise<void> {
  const cli = await kindOnItsEngine(options);
  await mustExist(cli, name, options.signal);
  await cli.run(kindArgs.deleteCluster(name, join(stateRoot(), "kind", name, "kubeconfig")), {
    timeoutMs: KIND_TIMEOUTS.deleteMs,
  });
}
