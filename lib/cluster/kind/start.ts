// Starting the kind provider's cluster: reuse the one `kind get clusters` lists, or create it from
// kind-config.yaml rendered for the timing profile; then look at a worker for what its nodes
// cannot do, and hand back a KindCluster.
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getContainerRuntimeClient } from "testcontainers";
import { parse } from "yaml";
import { RekindleError } from "../../errors.js";
import { waitForNodesReady } from "../../kube/nodes-ready.js";
import { onInterrupt } from "../../util/cleanup.js";
import { stateRoot } from "../../util/paths.js";
import { silentProgress, type Progress } from "../../util/progress.js";
import { TIMING_PROFILES, type TimingProfile } from "../profiles.js";
import type { NodeCapability } from "../provider.js";
import { KindCli, kindArgs } from "./cli.js";
import { ensureKindEngine, type KindEngine } from "./engine.js";
import { prepareHostSettings, type HostSettings } from "./host-settings.js";
import { ensureKindBinary, findKindBinary } from "../../build/kind-binary.js";
import { checkNodeImageChoice, defaultNodeImageChoice, resolveNodeImage } from "./node-image-choice.js";
import { KIND_TIMEOUTS, KindCluster } from "./cluster.js";
import { DEFAULT_KIND_CONFIG, renderKindConfig, writeKindConfig, type RenderedKindConfig } from "./config.js";
import type { FillPlanner } from "./fill.js";
import type { SmallNodeSettings } from "./small-node.js";
import { connectContainerEngine, KindNodes, type RuntimeClientFactory } from "./nodes.js";

/** systemd-logind talks over the system bus; without it the kubelet gets no shutdown inhibitor. */
const SYSTEM_BUS_SOCKET = "/run/dbus/system_bus_socket";
/** Where kubeadm writes the kubelet's configuration on a node. */
const KUBELET_CONFIG_PATH = "/var/lib/kubelet/config.yaml";

const NAME_PATTERN = /^[a-z0-9]([-a-z0-9]{0,48}[a-z0-9])?$/;

/** Everything a KindCluster needs; startKindCluster builds it, tests may build one over stand-ins. */
export interface KindClusterOptions {
  /** kind cluster name. Default "rekindle". */
  name?: string;
  /** Timing profile. Default: the "default" profile (kind-config.yaml as written). */
  profile?: TimingProfile;
  /** The kind config rendered for the profile. Default <repo>/kind-config.yaml. */
  configPath?: string;
  /** kind binary. Default $REKINDLE_KIND, else "kind" on PATH, else rekindle's cached build (built when missing). */
  kindBinary?: string;
  /**
   * Node image for a new cluster: "auto" (kindest/node when the engine has or can pull it, else
   * rekindle's offline image), "kindest", "rekindle", or an image reference.
   * Default $REKINDLE_KIND_IMAGE, else "auto".
   */
  image?: string;
  /** Use a cluster `kind get clusters` already lists (never deleted by destroy). Default true. */
  reuse?: boolean;
  /** Leave a cluster this run created running on destroy() (keepHint says how to remove it). Default false. */
  keep?: boolean;
  /** Rendered config and kubeconfig. Default <stateRoot>/kind/<name>. */
  stateDir?: string;
  /** Default: "kind-" + 6 hex digits. */
  runId?: string;
  /** Largest pressure fill written into a node. Default $REKINDLE_KIND_MAX_FILL, else 8 GiB. */
  maxFillBytes?: number;
  /** Sizes pressure fills. Default: kubelet stats summary − evictionHard threshold + margin. */
  fillPlanner?: FillPlanner;
  /** How small a pressured node looks to its kubelet; null: real size. Default DEFAULT_SMALL_NODE. */
  smallNode?: SmallNodeSettings | null;
  /** Exec'd in a node after startNode until it exits 0; null: do not wait. Default DEFAULT_AGENT_PROBE. */
  agentProbe?: readonly string[] | null;
  /**
   * Default: testcontainers' getContainerRuntimeClient, on the engine ensureKindEngine picks (the
   * user's own, or rekindle's private one where privileged containers fail). Given: used as is.
   */
  containerEngine?: RuntimeClientFactory;
  /** Install the rekindle-shared StorageClass and run its provisioner (needs the API server). Default true. */
  sharedStorage?: boolean;
  /**
   * Also install the attaching CSI driver (notes/csi-attach.md) and make rekindle-csi the default
   * class and the suites' (needs sharedStorage and Go to build it once). Default true; false keeps
   * the suites on rekindle-shared, whose volumes need no attach.
   */
  csiStorage?: boolean;
  /** Wait until every worker is Ready and untainted before returning (needs the API server). Default true. */
  waitForWorkers?: boolean;
  progress?: Progress;
  signal?: AbortSignal;
}

/**
 * What kind nodes cannot do, found by looking at a worker: kindest/node installs systemd without
 * D-Bus, so systemd-logind is absent and the kubelet's graceful node shutdown never starts.
 */
export async function probeUnsupported(
  nodes: KindNodes,
  worker: string | undefined,
): Promise<Partial<Record<NodeCapability, string>>> {
  if (worker === undefined) return {};
  const bus = await nodes.exec(worker, ["test", "-S", SYSTEM_BUS_SOCKET]).catch(() => undefined);
  if (bus === undefined || bus.exitCode === 0) return {};
  return {
    "graceful-shutdown": `kind node ${worker} has no system D-Bus (${SYSTEM_BUS_SOCKET}), so systemd-logind cannot give the kubelet a shutdown inhibitor: docker stop halts the node in order but the kubelet does not terminate its pods first`,
  };
}

/**
 * A reused cluster keeps the knobs it was created with: warn when its kubelet's lease duration is
 * not the profile's (the expected timeline would be wrong). Quiet when the file cannot be read.
 */
export async function reusedLeaseMismatch(
  nodes: KindNodes,
  worker: string | undefined,
  profile: TimingProfile,
): Promise<string | undefined> {
  if (worker === undefined) return undefined;
  const result = await nodes.exec(worker, ["cat", KUBELET_CONFIG_PATH]).catch(() => undefined);
  if (result?.exitCode !== 0) return undefined;
  let lease: unknown;
  try {
    lease = (parse(result.output) as { nodeLeaseDurationSeconds?: unknown } | null)?.nodeLeaseDurationSeconds;
  } catch {
    return undefined;
  }
  if (typeof lease !== "number" || lease === profile.nodeLeaseDurationSeconds) return undefined;
  return `warning: reused kind cluster's kubelet on ${worker} has nodeLeaseDurationSeconds ${lease}, profile ${profile.name} expects ${profile.nodeLeaseDurationSeconds}; recreate it (kind delete cluster --name ${nodes.cluster}) for the profile's timings`;
}

function readSourceConfig(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new RekindleError("NOT_FOUND", `cannot read kind config ${path}`, {
      hint: `pass configPath pointing at a kind Cluster config (default ${DEFAULT_KIND_CONFIG})`,
      cause: error,
    });
  }
}

function checkedClusterName(name: string): string {
  if (!NAME_PATTERN.test(name)) {
    throw RekindleError.invalidInput(
      "kind cluster name",
      name,
      "lowercase letters, digits and '-', at most 50",
    );
  }
  return name;
}

/** The kind binary given, else one found, else rekindle's own build of the pinned release. */
async function kindBinary(
  options: KindClusterOptions,
  progress: Progress,
  signal: AbortSignal | undefined,
): Promise<string> {
  return (
    options.kindBinary ??
    findKindBinary() ??
    (await ensureKindBinary(undefined, { progress, ...(signal ? { signal } : {}) }))
  );
}

/**
 * Reuses kind cluster `name` when `kind get clusters` lists it (unless reuse is off), else creates
 * it, preparing the host settings first (into `host`, so the caller's undo restores them). True
 * when it created the cluster.
 */
async function reuseOrCreate(
  cli: KindCli,
  options: KindClusterOptions,
  host: { settings?: HostSettings },
  args: Omit<Parameters<typeof createCluster>[1], "image"> & { image: string },
): Promise<boolean> {
  const { name, progress, signal } = args;
  const existing = await cli.clusters(signal);
  if (existing.includes(name)) {
    if (options.reuse === false) {
      throw new RekindleError("CONFLICT", `kind cluster ${name} already exists and reuse is off`, {
        hint: `delete it (kind delete cluster --name ${name}), pick another name, or allow reuse`,
      });
    }
    progress.info(
      `reusing kind cluster ${name} (kind get clusters lists it); it keeps the timing knobs it was created with and stays running afterwards`,
    );
    return false;
  }
  const image = await resolveNodeImage(args.image, { progress, ...(signal ? { signal } : {}) });
  host.settings = prepareHostSettings(progress);
  await createCluster(cli, { ...args, image });
  return true;
}

/** The cluster's optional settings, those given. */
function optionalSettings(options: KindClusterOptions) {
  return {
    ...(options.maxFillBytes !== undefined ? { maxFillBytes: options.maxFillBytes } : {}),
    ...(options.fillPlanner !== undefined ? { fillPlanner: options.fillPlanner } : {}),
    ...(options.smallNode !== undefined ? { smallNode: options.smallNode } : {}),
    ...(options.agentProbe !== undefined ? { agentProbe: options.agentProbe } : {}),
  };
}

/** What a kept cluster on rekindle's private engine needs said. */
function keepNoteFor(kindEngine: KindEngine | undefined): { keepNote?: string } {
  return kindEngine?.dockerHost !== undefined
    ? {
        keepNote: `its nodes run on rekindle's private engine: export DOCKER_HOST=${kindEngine.dockerHost}; stop it with scripts/kind-engine.sh stop after deleting the cluster`,
      }
    : {};
}

/**
 * Reuses kind cluster `name` when `kind get clusters` lists it, else creates it from the config
 * rendered for the profile (`kind create cluster --wait 5m`, minutes). Writes the kubeconfig from
 * `kind get kubeconfig` into the state directory.
 */
export async function startKindCluster(options: KindClusterOptions = {}): Promise<KindCluster> {
  const name = checkedClusterName(options.name ?? "rekindle");
  const imageChoice = options.image ?? defaultNodeImageChoice();
  checkNodeImageChoice(imageChoice);
  const profile = options.profile ?? TIMING_PROFILES.default;
  const progress = options.progress ?? silentProgress;
  const signal = options.signal;
  const stateDir = options.stateDir ?? join(stateRoot(), "kind", name);
  // Before anything connects to an engine: DOCKER_HOST may change here.
  const kindEngine: KindEngine | undefined =
    options.containerEngine === undefined ? await ensureKindEngine(progress, signal) : undefined;
  // Set by the creation (before it can fail), restored by the undo.
  const host: { settings?: HostSettings } = {};
  let created = false;
  const undoSetup = async (): Promise<void> => {
    host.settings?.restore();
    await kindEngine?.stop();
  };
  try {
    const engine = options.containerEngine ?? getContainerRuntimeClient;
    const cli = new KindCli({ binary: await kindBinary(options, progress, signal) });

    await connectContainerEngine(engine); // a clear error now rather than kind's own later
    progress.info(`${await cli.version(signal)} (${cli.binary}); state in ${stateDir}`);
    const sourcePath = options.configPath ?? DEFAULT_KIND_CONFIG;
    const config = renderKindConfig(readSourceConfig(sourcePath), profile, { name, source: sourcePath });
    const configPath = writeKindConfig(config, stateDir);
    const kubeconfigPath = join(stateDir, "kubeconfig");

    created = await reuseOrCreate(cli, options, host, {
      name,
      configPath,
      kubeconfigPath,
      config,
      profile,
      image: imageChoice,
      progress,
      signal,
    });

    try {
      writeFileSync(kubeconfigPath, await cli.kubeconfig(name, signal), { mode: 0o600 });
      const nodes = new KindNodes(name, engine);
      const firstWorker = (await nodes.workers())[0];
      const unsupported = await probeUnsupported(nodes, firstWorker);
      if (!created) {
        const mismatch = await reusedLeaseMismatch(nodes, firstWorker, profile);
        if (mismatch !== undefined) progress.info(mismatch);
      }
      const cluster = new KindCluster({
        name,
        runId: options.runId ?? `kind-${randomBytes(3).toString("hex")}`,
        profile,
        config,
        kubeconfigPath,
        created,
        keep: options.keep === true,
        cli,
        nodes,
        unsupported,
        ...optionalSettings(options),
        afterDelete: undoSetup,
        ...keepNoteFor(kindEngine),
        progress,
      });
      await waitForWorkers(cluster, nodes, options, progress);
      await startStorage(cluster, options);
      return cluster;
    } catch (error) {
      if (created && options.keep !== true) await deleteQuietly(cli, name, kubeconfigPath);
      throw error;
    }
  } catch (error) {
    // Nothing of this run is left: no cluster (deleted above), host settings back, engine stopped.
    if (!created || options.keep !== true) await undoSetup();
    throw error;
  }
}

/** The storage the options ask for (the provisioners run in this process until destroy()). */
async function startStorage(
  cluster: KindCluster,
  options: Pick<KindClusterOptions, "sharedStorage" | "csiStorage" | "signal">,
): Promise<void> {
  if (options.sharedStorage === false) return;
  await cluster.startStorage({
    csi: options.csiStorage !== false,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/**
 * `kind create --wait` returns once the control plane is Ready; the workers join and turn Ready
 * seconds later (on a fresh cluster here 1–4 s after rekindle's first scenario began deploying,
 * issue 23). A scenario must find every worker schedulable, as on the sim.
 */
async function waitForWorkers(
  cluster: KindCluster,
  nodes: KindNodes,
  options: Pick<KindClusterOptions, "waitForWorkers" | "signal">,
  progress: Progress,
): Promise<void> {
  if (options.waitForWorkers === false) return;
  const { signal } = options;
  await waitForNodesReady(cluster.kubeConfig(), await nodes.workers(), {
    timeoutMs: KIND_TIMEOUTS.workersReadyMs,
    ...(signal ? { signal } : {}),
    onWait: (ms, waiting) => {
      progress.info(`waiting for ${waiting.join(", ")} Ready (${Math.round(ms / 1000)}s)`);
    },
  });
}

async function createCluster(
  cli: KindCli,
  args: {
    name: string;
    configPath: string;
    kubeconfigPath: string;
    config: RenderedKindConfig;
    profile: TimingProfile;
    /** undefined: kind's default node image. */
    image: string | undefined;
    progress: Progress;
    signal: AbortSignal | undefined;
  },
): Promise<void> {
  const { name, configPath, kubeconfigPath, progress, signal } = args;
  const phase = progress.phase(
    `creating kind cluster ${name} (${args.config.workers} workers, profile ${args.profile.name}, image ${args.image ?? "kind's default"}; takes minutes)`,
  );
  // Ctrl-C while kind works leaves a half-made cluster: delete it on the way out.
  const release = onInterrupt(() => deleteQuietly(cli, name, kubeconfigPath));
  try {
    await cli.run(
      kindArgs.createCluster(name, configPath, kubeconfigPath, KIND_TIMEOUTS.createWait, args.image),
      {
        ...(signal ? { signal } : {}),
        onLine: (line) => {
          if (line.trim() !== "") phase.update(line.trim());
        },
      },
    );
    phase.end("created");
  } catch (error) {
    phase.end("failed");
    // kind removes what it made when it fails on its own, not when it is cancelled.
    await deleteQuietly(cli, name, kubeconfigPath);
    throw error;
  } finally {
    release();
  }
}

async function deleteQuietly(cli: KindCli, name: string, kubeconfigPath: string): Promise<void> {
  await cli
    .run(kindArgs.deleteCluster(name, kubeconfigPath), { timeoutMs: KIND_TIMEOUTS.deleteMs })
    .catch(() => undefined);
}
