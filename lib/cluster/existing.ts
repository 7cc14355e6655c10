// The existing provider: any cluster a kubeconfig reaches. rekindle only does there what it can
// undo: it creates run-labelled namespaces and workloads and deletes them again; it never stops,
// partitions, pressures or shuts down a node it did not create, so those scenarios are skipped.
import { randomBytes } from "node:crypto";
import { errorMessage, RekindleError } from "../errors.js";
import { k8s } from "../kube/client.js";
import { loadKubeconfig } from "../kube/kubeconfig-load.js";
import { isControlPlaneNode } from "../kube/queries.js";
import { silentProgress, type Progress } from "../util/progress.js";
import { withTimeout } from "../util/time.js";
import { TIMING_PROFILES, type TimingProfile } from "./profiles.js";
import type { ClusterUnderTest, EvictionSettings, NodeCapability } from "./provider.js";

export interface ExistingClusterOptions {
  /** Default: the files $KUBECONFIG lists, merged as kubectl merges them, else ~/.kube/config. */
  kubeconfig?: string;
  /** Default: the kubeconfig's current context. */
  context?: string;
  /** The timing profile whose knobs the cluster runs with. Default: the "default" profile (upstream). */
  profile?: TimingProfile;
  progress?: Progress;
}

const HANDS_OFF =
  "rekindle never does to a cluster it did not create what it cannot undo; run node faults with --provider kind or sim";

/** Upstream kubelet defaults (graceful node shutdown is off unless configured). */
const UPSTREAM_EVICTION: EvictionSettings = {
  pressureTransitionPeriodMs: 300_000,
  monitoringIntervalMs: 10_000,
  statusUpdateIntervalMs: 10_000,
  shutdownGracePeriodMs: 0,
};

export class ExistingCluster implements ClusterUnderTest {
  readonly provider = "existing" as const;
  readonly runId: string;
  readonly profile: TimingProfile;
  readonly unsupported: Record<NodeCapability, string> = {
    lifecycle: HANDS_OFF,
    partition: HANDS_OFF,
    pressure: HANDS_OFF,
    "graceful-shutdown": HANDS_OFF,
    "controller-manager-flags": HANDS_OFF,
    fencing: HANDS_OFF,
    "clock-skew": HANDS_OFF,
    "apiserver-pause": HANDS_OFF,
    "node-reregistration": HANDS_OFF,
    "in-cluster-controller": HANDS_OFF,
  };
  /** None: rekindle keeps its hands off an existing cluster's nodes. */
  readonly capabilities = {};
  /** Unknown hardware and storage: generous guesses, only used by scenarios that move pods. */
  readonly latencies = { podStartMs: 5_000, attachMs: 5_000 };
  readonly eviction = UPSTREAM_EVICTION;
  readonly description: string;
  readonly #kc: k8s.KubeConfig;

  private constructor(kc: k8s.KubeConfig, profile: TimingProfile, description: string) {
    this.#kc = kc;
    this.profile = profile;
    this.description = description;
    this.runId = `existing-${randomBytes(4).toString("hex")}`;
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
    return new ExistingCluster(kc, profile, `existing cluster, context ${context} (${server})`);
  }

  kubeConfig(): k8s.KubeConfig {
    return this.#kc;
  }

  /** Schedulable nodes without the control-plane role. */
  async workerNodes(): Promise<string[]> {
    const nodes = await this.#kc.makeApiClient(k8s.CoreV1Api).listNode();
    return nodes.items
      .filter((n) => !isControlPlaneNode(n) && n.spec?.unschedulable !== true)
      .map((n) => n.metadata?.name ?? "")
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
