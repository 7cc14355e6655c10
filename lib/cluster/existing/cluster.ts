// The existing provider: any cluster a kubeconfig reaches. By default rekindle only does there what
// it can undo: it creates run-labelled namespaces and workloads and deletes them again, and skips
// every node fault. With --allow-faults, the nodes the user named (rails.ts) and rekindle's
// node agent (lib/agent/, handed in as `nodeFaults`), it stops, partitions and fills those nodes only.
import { randomBytes } from "node:crypto";
import { errorMessage, RekindleError } from "../../errors.js";
import { k8s } from "../../kube/client.js";
import { loadKubeconfig } from "../../kube/kubeconfig-load.js";
import { isControlPlaneNode } from "../../kube/queries.js";
import { silentProgress, type Progress } from "../../util/progress.js";
import { withTimeout } from "../../util/time.js";
import { TIMING_PROFILES, type TimingProfile } from "../profiles.js";
import { knobApi, readExistingKnobs, type KnobApi } from "./knobs.js";
import { chooseExistingStorage, readStorageFacts, type ExistingStorage } from "./storage.js";
import { existingControllerCapabilities, revertsPowerOnFirst } from "./controller.js";
import { loadExistingFencing, type ExistingFencing } from "./fencing.js";
import { guardedNodeFaults, resolveFaultRails, type FaultRailsRequest } from "./rails.js";
import type {
  CapabilityMap,
  ClusterUnderTest,
  EvictionSettings,
  ExistingNodeFaults,
  StorageSettings,
  KnobSource,
  FaultRails,
  NodeCapability,
  NodeFaultLocator,
  ProviderLatencies,
} from "../provider.js";

export interface ExistingClusterOptions {
  /** Default: the files $KUBECONFIG lists, merged as kubectl merges them, else ~/.kube/config. */
  kubeconfig?: string;
  /** Default: the kubeconfig's current context. */
  context?: string;
  /** The timing profile whose knobs the cluster runs with. Default: the "default" profile (upstream). */
  profile?: TimingProfile;
  progress?: Progress;
  /** --allow-faults and the nodes it allows. Default: no faults (every node fault skipped). */
  rails?: FaultRailsRequest;
  /** The node agent's fault capabilities (lib/agent/agentNodeFaults); used only with rails. Default: none. */
  nodeFaults?: ExistingNodeFaults;
  /** How `rekindle reap` reaches the agent again (the journal's locator); absent: faults are not journalled. */
  faultLocator?: NodeFaultLocator;
  /** Reads the kubelet's configz, Leases and conditions (knob values the windows use). Default: through kc; false: none. */
  knobs?: KnobApi | false;
  /** --storage-class: the class of the suites' volume (must exist and let a volume move). Default: the cluster's default class. */
  storageClass?: string;
  /** Choose the suites' storage (a run deploys the volume; the verbs deploy nothing). Default true. */
  storage?: boolean;
  /**
   * --fence-config: the user's fence configuration (the controller's format), with faults allowed.
   * It gives the recovery controller, in-process and in-cluster, a way to fence the allowed nodes.
   * Default: none (the controller's scenarios are skipped, saying why).
   */
  fenceConfig?: string;
  /** --controller-image: the controller image the nodes can run. Default: the one deploy/controller/deployment.yaml names. */
  controllerImage?: string;
  /** Finds the node agent once the cluster answers (only with faults allowed); its answer overrides nodeFaults and faultLocator. */
  agent?: ExistingAgent;
}

/** The node agent's capabilities and locator for the cluster `kc` reaches; undefined: no agent. */
export type ExistingAgent = (
  kc: k8s.KubeConfig,
) => Promise<{ nodeFaults: ExistingNodeFaults; faultLocator: NodeFaultLocator } | undefined>;

/**
 * Container start and attach on hardware rekindle cannot see: assumed, and reported as such. A
 * start window is [start, start + 1 s] widened by the profile's slack, so an assumed start as long
 * as the slack opens it at 0: nothing claims a pod cannot start faster than a guess (a 5 s guess
 * judged kind-as-existing's 1.3 s starts "early"), and it closes at 2 × slack + 1 s.
 */
function assumedLatencies(profile: TimingProfile): ProviderLatencies {
  return { podStartMs: profile.slackMs, attachMs: 5_000 };
}

const HANDS_OFF =
  "rekindle never does to a cluster it did not create what it cannot undo; run node faults with --provider kind or sim, or allow them here with --allow-faults and --node-selector or --nodes (through rekindle's node agent)";
const NEEDS_AGENT =
  "node faults on a cluster rekindle did not create go through rekindle's node agent (rekindle agent install), which this run does not have";
/** The bundled controller fences out of band; the agent, on the very node that is lost or cut off, is no fence. */
const NO_FENCE =
  "the recovery controller fences a lost node by powering it off out of band (Redfish, fence agents or a webhook: lib/controller/drivers/), and this run was given no way into this cluster's machines (--fence-config FILE); its node agent is no fence (it runs on the very node that is lost or cut off)";
const NO_CONTROLLER_HERE =
  "deploying the recovery controller (deploy/controller/) here needs a fence driver that reaches this cluster's machines out of band (--fence-config FILE) and its image on the nodes (--controller-image)";
const NEVER_HERE = "rekindle does not change the control plane of a cluster it did not create";

const NODE_FAULTS = ["lifecycle", "partition", "pressure", "graceful-shutdown"] as const;
type NodeFaultName = (typeof NODE_FAULTS)[number];

/** Why each capability is missing: node faults say what they need, the control plane is never touched. */
function unsupportedFor(
  rails: FaultRails | undefined,
  offered: Partial<CapabilityMap>,
  agent: boolean,
): Partial<Record<NodeCapability, string>> {
  const nodeReason =
    rails === undefined ? HANDS_OFF : agent ? "the node agent does not offer it" : NEEDS_AGENT;
  const unsupported: Partial<Record<NodeCapability, string>> = {
    "controller-manager-flags": NEVER_HERE,
    "clock-skew": HANDS_OFF,
    "apiserver-pause": NEVER_HERE,
    "node-reregistration": HANDS_OFF,
    "bmc-lies":
      "the fence driver talks to this cluster's own BMCs, which rekindle does not stand in for (lying BMCs are the sim's and kind's)",
  };
  for (const name of NODE_FAULTS as readonly NodeFaultName[])
    if (offered[name] === undefined) unsupported[name] = nodeReason;
  // --fence-config offers the controller's two.
  if (offered.fencing === undefined) unsupported.fencing = rails === undefined ? HANDS_OFF : NO_FENCE;
  if (offered["in-cluster-controller"] === undefined)
    unsupported["in-cluster-controller"] = rails === undefined ? HANDS_OFF : NO_CONTROLLER_HERE;
  return unsupported;
}

interface ExistingClusterInit {
  kc: k8s.KubeConfig;
  profile: TimingProfile;
  eviction: EvictionSettings;
  knobSources: KnobSource[];
  description: string;
  rails?: FaultRails;
  nodeFaults?: ExistingNodeFaults;
  faultLocator?: NodeFaultLocator;
  storage: Omit<ExistingStorage, "summary">;
  fencing?: ExistingFencing;
  controllerImage?: string;
  progress: Progress;
}

/** Upstream kubelet defaults (graceful node shutdown is off unless configured). */
const UPSTREAM_EVICTION: EvictionSettings = {
  pressureTransitionPeriodMs: 300_000,
  monitoringIntervalMs: 10_000,
  statusUpdateIntervalMs: 10_000,
  shutdownGracePeriodMs: 0,
};

/** The agent's faults and locator (found now, or handed in); only asked for with faults allowed. */
async function nodeFaultsOf(
  kc: k8s.KubeConfig,
  options: ExistingClusterOptions,
): Promise<Pick<ExistingClusterInit, "nodeFaults" | "faultLocator">> {
  const agent = options.agent !== undefined ? await options.agent(kc) : undefined;
  const nodeFaults = agent?.nodeFaults ?? options.nodeFaults;
  const faultLocator = agent?.faultLocator ?? options.faultLocator;
  return { ...(nodeFaults ? { nodeFaults } : {}), ...(faultLocator ? { faultLocator } : {}) };
}

/**
 * The knobs of the first node faults may hit (else the first worker), read; the latencies assumed.
 * With reading off, the profile and upstream's kubelet, every value marked assumed.
 */
async function readKnobs(
  core: k8s.CoreV1Api,
  api: KnobApi | false,
  rails: FaultRails | undefined,
  profile: TimingProfile,
): Promise<Pick<ExistingClusterInit, "profile" | "eviction" | "knobSources">> {
  const latencies: KnobSource[] = Object.entries(assumedLatencies(profile)).map(([name, ms]) => ({
    name,
    value: `${ms} ms`,
    source: "assumed",
    from: "the existing provider cannot see the machines: the profile's slack, so its window opens at 0",
  }));
  if (api === false) return { profile, eviction: UPSTREAM_EVICTION, knobSources: latencies };
  const workers = (await core.listNode()).items.filter((n) => !isControlPlaneNode(n));
  const node = rails?.allowedNodes[0] ?? workers[0]?.metadata?.name;
  const read = await readExistingKnobs(api, node, profile, UPSTREAM_EVICTION);
  return { profile: read.profile, eviction: read.eviction, knobSources: [...read.sources, ...latencies] };
}

/**
 * The suites' storage (storage.ts). Where the classes cannot be read (no RBAC to list
 * them), a named class is taken as it is, assumed to attach; without one the volume is refused.
 */
async function existingStorage(kc: k8s.KubeConfig, requested: string | undefined): Promise<ExistingStorage> {
  let facts;
  try {
    facts = await readStorageFacts(kc);
  } catch (error) {
    const why = `StorageClasses not read (${errorMessage(error)})`;
    if (requested !== undefined)
      return {
        storage: { storageClass: requested, attachRequired: true },
        summary: `storage: StorageClass ${requested} (--storage-class); ${why}: assumed to let a volume move and to attach`,
      };
    return { volumesStayPut: `${why}; name a class with --storage-class`, summary: `storage: ${why}` };
  }
  return chooseExistingStorage(facts, requested);
}

/** --fence-config loaded and checked against the rails (only with faults allowed); said once. */
async function existingFencing(
  kc: k8s.KubeConfig,
  path: string | undefined,
  rails: FaultRails | undefined,
  progress: Progress,
): Promise<ExistingFencing | undefined> {
  if (path === undefined) return undefined;
  if (rails === undefined)
    throw new RekindleError(
      "INVALID_INPUT",
      `--fence-config ${path} is for faults on this cluster, which are not allowed`,
      { hint: "add --allow-faults with --nodes or --node-selector, or drop --fence-config" },
    );
  const fencing = await loadExistingFencing({ kc, path, rails });
  progress.info(
    `fencing:   ${path}; the recovery controller may fence ${rails.allowedNodes.join(", ")} only (--node-selector "${fencing.nodeSelector}")`,
  );
  return fencing;
}

export class ExistingCluster implements ClusterUnderTest {
  readonly provider = "existing" as const;
  readonly runId: string;
  readonly profile: TimingProfile;
  readonly unsupported: Partial<Record<NodeCapability, string>>;
  /** None unless faults are allowed and the agent is there: then the agent's, walled to the rails. */
  readonly capabilities: Partial<CapabilityMap>;
  readonly faultRails?: FaultRails;
  /** Unknown hardware: assumed (assumedLatencies), used only by scenarios that move pods. */
  readonly latencies: ProviderLatencies;
  /** Its node stop is the agent's: the kubelet and runtime stop, pods are killed, the machine stays on. */
  readonly stopLeavesPowerOn = true;
  /** The kubelet's, read through configz where it answered; upstream's defaults otherwise. */
  readonly eviction: EvictionSettings;
  readonly knobSources: readonly KnobSource[];
  readonly description: string;
  /** The class the suites' volume gets (--storage-class, else the default), when it can serve. */
  readonly storage?: StorageSettings;
  readonly volumesStayPut?: string;
  readonly #kc: k8s.KubeConfig;
  /** Present only when the agent's locator was handed in: then faults are journalled. */
  faultLocator?(): NodeFaultLocator;

  private constructor(init: ExistingClusterInit) {
    this.#kc = init.kc;
    this.profile = init.profile;
    this.latencies = assumedLatencies(init.profile);
    this.eviction = init.eviction;
    this.knobSources = init.knobSources;
    this.description = init.description;
    if (init.storage.storage !== undefined) this.storage = init.storage.storage;
    if (init.storage.volumesStayPut !== undefined) this.volumesStayPut = init.storage.volumesStayPut;
    this.runId = `existing-${randomBytes(4).toString("hex")}`;
    const locator = init.faultLocator;
    if (locator !== undefined) this.faultLocator = () => locator;
    if (init.rails !== undefined) this.faultRails = init.rails;
    // No journal, no faults: a fault `rekindle reap` could not find again is not started here.
    const faults = init.rails !== undefined && locator !== undefined ? init.nodeFaults : undefined;
    const fencing = init.fencing;
    this.capabilities =
      init.rails === undefined || faults === undefined
        ? {}
        : fencing === undefined
          ? guardedNodeFaults(faults, init.rails)
          : {
              ...guardedNodeFaults(revertsPowerOnFirst(faults, fencing, init.kc, init.progress), init.rails),
              ...existingControllerCapabilities({
                kc: init.kc,
                runId: this.runId,
                fencing,
                progress: init.progress,
                ...(init.controllerImage !== undefined ? { image: init.controllerImage } : {}),
              }),
            };
    this.unsupported = unsupportedFor(
      init.rails,
      this.capabilities,
      init.nodeFaults !== undefined && locator !== undefined,
    );
  }

  /** Loads the kubeconfig and checks the API server answers; fails naming the file and context. */
  static async open(options: ExistingClusterOptions = {}): Promise<ExistingCluster> {
    const profile = options.profile ?? TIMING_PROFILES.default;
    const { kc, source: path } = loadKubeconfig({
      ...(options.kubeconfig !== undefined ? { path: options.kubeconfig } : {}),
      ...(options.context !== undefined ? { context: options.context } : {}),
    });
    const context = kc.getCurrentContext();
    const server = kc.getCurrentCluster()?.server ?? "?";
    const progress = options.progress ?? silentProgress;
    progress.info(`existing cluster: context ${context} (${server}) from ${path}`);
    try {
      await withTimeout(
        kc.makeApiClient(k8s.CoreV1Api).listNode({ limit: 1 }),
        15_000,
        `the API server at ${server}`,
      );
    } catch (error) {
      throw new RekindleError(
        "UNREACHABLE",
        `cannot reach the cluster of context ${context} (${server}): ${errorMessage(error)}`,
        {
          hint: `check ${path} and that the cluster is up (kubectl --context ${context} get nodes)`,
          cause: error,
        },
      );
    }
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const rails =
      options.rails?.allowFaults === true
        ? await resolveFaultRails(
            options.rails,
            async (labelSelector) =>
              (await core.listNode(labelSelector !== undefined ? { labelSelector } : {})).items,
          )
        : undefined;
    const fencing = await existingFencing(kc, options.fenceConfig, rails, progress);
    const knobs = await readKnobs(core, options.knobs ?? knobApi(kc), rails, profile);
    const { summary, ...storage } =
      options.storage === false ? { summary: undefined } : await existingStorage(kc, options.storageClass);
    if (summary !== undefined) progress.info(summary);
    return new ExistingCluster({
      kc,
      ...knobs,
      storage,
      description: `existing cluster, context ${context} (${server})`,
      progress,
      ...(fencing ? { fencing } : {}),
      ...(options.controllerImage === undefined ? {} : { controllerImage: options.controllerImage }),
      ...(rails ? { rails, ...(await nodeFaultsOf(kc, options)) } : {}),
    });
  }

  kubeConfig(): k8s.KubeConfig {
    return this.#kc;
  }

  /**
   * Schedulable nodes without the control-plane role; with faults allowed, only the allowed ones
   * (scenarios pick their targets from this list, so they stay on the rails).
   */
  async workerNodes(): Promise<string[]> {
    const nodes = await this.#kc.makeApiClient(k8s.CoreV1Api).listNode();
    const allowed = this.faultRails?.allowedNodes;
    return nodes.items
      .filter((n) => !isControlPlaneNode(n) && n.spec?.unschedulable !== true)
      .map((n) => n.metadata?.name ?? "")
      .filter((n) => allowed === undefined || allowed.includes(n))
      .sort();
  }

  keepHint(): string {
    return "the existing cluster is left as it was (only this run's namespaces were created and deleted)";
  }

  /** Nothing to tear down: rekindle did not create this cluster. */
  destroy(): Promise<void> {
    return Promise.resolve();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.destroy();
  }
}
