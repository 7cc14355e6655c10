// The Kubernetes versions a cluster reports about itself, for summary.json's environment: the
// apiserver's /version, each Node's status.nodeInfo, and the controller manager's and scheduler's
// image tags where they run as pods (kind, kubeadm). The sim runs them as processes of its own
// pinned build, so there the pinned version is given, saying so.
import { errorMessage } from "../errors.js";
import type { ProviderName } from "../cluster/provider.js";
import { PINNED_SIM_VERSIONS } from "../build/versions.js";
import { k8s } from "../kube/client.js";
import { withTimeout } from "../util/time.js";
import type { ClusterVersions, ComponentVersion, NodeInfoVersions } from "./environment.js";

/** How long each question to the cluster may take: these facts must not hold a run up. */
const QUERY_TIMEOUT_MS = 10_000;

function orNull(text: string | undefined): string | null {
  return text === undefined || text === "" ? null : text;
}

async function apiserverVersion(kc: k8s.KubeConfig): Promise<ComponentVersion> {
  const source = "kube-apiserver /version (gitVersion)";
  try {
    const info = await withTimeout(kc.makeApiClient(k8s.VersionApi).getCode(), QUERY_TIMEOUT_MS, source);
    return { version: orNull(info.gitVersion), source };
  } catch (error) {
    return { version: null, source: `${source}: ${errorMessage(error)}` };
  }
}

function nodeVersions(node: k8s.V1Node): NodeInfoVersions {
  const info = node.status?.nodeInfo;
  return {
    name: node.metadata?.name ?? "",
    kubeletVersion: orNull(info?.kubeletVersion),
    kubeProxyVersion: orNull(info?.kubeProxyVersion),
    containerRuntimeVersion: orNull(info?.containerRuntimeVersion),
    osImage: orNull(info?.osImage),
    kernelVersion: orNull(info?.kernelVersion),
  };
}

/** The distinct non-null values, comma-separated; null when there are none. */
function distinct(values: readonly (string | null)[]): string | null {
  const set = [...new Set(values.filter((v): v is string => v !== null))].sort();
  return set.length === 0 ? null : set.join(", ");
}

/** A control-plane component's version from the image tag of its pod in kube-system, if it runs as one. */
async function podImageVersion(kc: k8s.KubeConfig, component: string): Promise<ComponentVersion> {
  const what = `image tag of the ${component} pod in kube-system`;
  try {
    const pods = await withTimeout(
      kc
        .makeApiClient(k8s.CoreV1Api)
        .listNamespacedPod({ namespace: "kube-system", labelSelector: `component=${component}` }),
      QUERY_TIMEOUT_MS,
      what,
    );
    const images = pods.items.flatMap((p) => p.spec?.containers.map((c) => c.image ?? "") ?? []);
    const tags = images.map((image) => /:([^:/@]+)(@.*)?$/.exec(image)?.[1] ?? null);
    const version = distinct(tags);
    return version === null
      ? { version: null, source: `${what}: no such pod (it does not run as a pod here)` }
      : { version, source: what };
  } catch (error) {
    return { version: null, source: `${what}: ${errorMessage(error)}` };
  }
}

function simPinned(component: string): ComponentVersion {
  return {
    version: PINNED_SIM_VERSIONS.kubernetes,
    source: `the sim's pinned ${component} build (lib/build/versions.ts); it runs as a process, not a pod`,
  };
}

/** Asks the cluster; never throws (a question that fails leaves its version null, saying why). */
export async function clusterVersions(kc: k8s.KubeConfig, provider: ProviderName): Promise<ClusterVersions> {
  const nodeSource =
    provider === "sim"
      ? "Node status.nodeInfo, as KWOK writes it (no real kubelet or kube-proxy runs on the sim)"
      : "Node status.nodeInfo";
  let nodes: NodeInfoVersions[] = [];
  let nodeError: string | undefined;
  try {
    const list = await withTimeout(kc.makeApiClient(k8s.CoreV1Api).listNode(), QUERY_TIMEOUT_MS, "the nodes");
    nodes = list.items
      .map(nodeVersions)
      .sort((a, b) => a.name.localeCompare(b.name, "en", { numeric: true }));
  } catch (error) {
    nodeError = errorMessage(error);
  }
  const fromNodes = (field: "kubeletVersion" | "kubeProxyVersion"): ComponentVersion => ({
    version: distinct(nodes.map((n) => n[field])),
    source: `${nodeSource}.${field}${nodeError !== undefined ? `: ${nodeError}` : ""}`,
  });
  const [apiserver, controllerManager, scheduler] = await Promise.all([
    apiserverVersion(kc),
    provider === "sim"
      ? Promise.resolve(simPinned("kube-controller-manager"))
      : podImageVersion(kc, "kube-controller-manager"),
    provider === "sim" ? Promise.resolve(simPinned("kube-scheduler")) : podImageVersion(kc, "kube-scheduler"),
  ]);
  return {
    apiserver,
    controllerManager,
    scheduler,
    kubelet: fromNodes("kubeletVersion"),
    kubeProxy: fromNodes("kubeProxyVersion"),
    nodes,
  };
}
