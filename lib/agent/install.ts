// `rekindle agent install|uninstall`: the agent's namespace, RBAC and DaemonSet from deploy/agent/,
// applied with the image named, and waited for until a pod is Ready on every worker. A failure
// leaves nothing behind: what was applied is removed before the error is thrown.
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { RekindleError, errorMessage } from "../errors.js";
import { applyManifests, deleteManifests, parseManifests, substitute } from "../kube/apply.js";
import { apiStatus, isNotFound, isPodReady, k8s } from "../kube/client.js";
import { podTrouble } from "../kube/pod-trouble.js";
import { PROJECT_ROOT } from "../util/project-files.js";
import { silentProgress, type Progress } from "../util/progress.js";
import { pollUntil } from "../util/time.js";
import { AgentClient } from "./client.js";
import { AGENT_NAME, AGENT_NAMESPACE, decodeRequest, REQUEST_LABEL } from "./protocol.js";

/** The fixtures, in the order they are applied. */
export const AGENT_FIXTURES = ["namespace.yaml", "rbac.yaml", "daemonset.yaml"] as const;

export interface AgentInstallTimeouts {
  /** Every agent pod Ready (the image already on the nodes or pullable). Default 120 s. */
  readyMs: number;
  /** The namespace gone after uninstall (the pods' grace period is 10 s). Default 120 s. */
  goneMs: number;
}

export const AGENT_INSTALL_TIMEOUTS: AgentInstallTimeouts = { readyMs: 120_000, goneMs: 120_000 };

export interface AgentInstallOptions {
  /** Default AGENT_NAMESPACE. */
  namespace?: string;
  /** The image the agent pods run. Default `rekindle:<version>` (the controller's image, which carries the agent). */
  image?: string;
  timeouts?: Partial<AgentInstallTimeouts>;
  progress?: Progress;
  signal?: AbortSignal;
}

export function defaultAgentImage(): string {
  const version = (
    JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string }
  ).version;
  return `rekindle:${version}`;
}

/** The fixtures' objects with the namespace and image put in. */
export function agentManifests(namespace: string, image: string): k8s.KubernetesObject[] {
  return AGENT_FIXTURES.flatMap((file) => {
    const path = join(PROJECT_ROOT, "deploy", "agent", file);
    return parseManifests(
      substitute(readFileSync(path, "utf8"), { NAMESPACE: namespace, IMAGE: image }),
      path,
    );
  });
}

async function refuseForeignNamespace(core: k8s.CoreV1Api, namespace: string): Promise<void> {
  try {
    const existing = await core.readNamespace({ name: namespace });
    if (existing.metadata?.labels?.["app.kubernetes.io/name"] !== AGENT_NAME)
      throw new RekindleError(
        "INVALID_INPUT",
        `namespace ${namespace} exists and is not rekindle's agent's`,
        {
          hint: "pick another with --namespace, or remove that namespace",
        },
      );
  } catch (error) {
    if (isNotFound(error)) return;
    if (error instanceof RekindleError) throw error;
    throw unreachableOrForbidden(error, `read namespace ${namespace}`);
  }
}

function unreachableOrForbidden(error: unknown, what: string): RekindleError {
  const status = apiStatus(error) ?? apiStatus((error as { cause?: unknown }).cause);
  if (status === 403 || status === 401)
    return new RekindleError("INVALID_INPUT", `this kubeconfig may not ${what}: ${errorMessage(error)}`, {
      hint: "installing the agent needs rights to create a namespace, RBAC objects and a DaemonSet (cluster-admin, typically)",
      cause: error,
    });
  return new RekindleError("UNREACHABLE", `cannot ${what}: ${errorMessage(error)}`, {
    hint: "is the cluster up and the kubeconfig's server reachable?",
    cause: error,
  });
}

/** Installs the agent and waits until a pod is Ready on every worker; returns those nodes. */
export async function installAgent(kc: k8s.KubeConfig, options: AgentInstallOptions = {}): Promise<string[]> {
  const namespace = options.namespace ?? AGENT_NAMESPACE;
  const image = options.image ?? defaultAgentImage();
  const progress = options.progress ?? silentProgress;
  const timeouts = { ...AGENT_INSTALL_TIMEOUTS, ...options.timeouts };
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await refuseForeignNamespace(core, namespace);
  const objects = agentManifests(namespace, image);
  const phase = progress.phase(`installing rekindle's node agent (${image}) in namespace ${namespace}`);
  try {
    try {
      await applyManifests(kc, objects);
    } catch (error) {
      throw unreachableOrForbidden(
        (error as { cause?: unknown }).cause ?? error,
        "create the agent's objects",
      );
    }
    const nodes = await waitReady(kc, namespace, image, timeouts.readyMs, options.signal, (text) => {
      phase.update(text);
    });
    phase.end(`Ready on ${nodes.join(", ")}`);
    return nodes;
  } catch (error) {
    phase.end("failed; removing what was applied");
    await removeObjects(kc, namespace, objects, timeouts.goneMs).catch((cleanup: unknown) => {
      progress.info(`could not remove the agent: ${errorMessage(cleanup)}`);
    });
    throw error;
  }
}

async function waitReady(
  kc: k8s.KubeConfig,
  namespace: string,
  image: string,
  readyMs: number,
  signal: AbortSignal | undefined,
  update: (text: string) => void,
): Promise<string[]> {
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  let pods: k8s.V1Pod[] = [];
  try {
    return await pollUntil(
      async () => {
        const ds = await apps.readNamespacedDaemonSet({ name: AGENT_NAME, namespace });
        pods = (
          await core.listNamespacedPod({ namespace, labelSelector: `app.kubernetes.io/name=${AGENT_NAME}` })
        ).items;
        const desired = ds.status?.desiredNumberScheduled ?? 0;
        const ready = pods.filter(isPodReady);
        update(`${ready.length} of ${desired} agent pods Ready`);
        const current = (ds.status?.observedGeneration ?? 0) >= (ds.metadata?.generation ?? 1);
        return current &&
          desired > 0 &&
          ready.length === desired &&
          (ds.status?.updatedNumberScheduled ?? 0) === desired
          ? ready.map((pod) => pod.spec?.nodeName ?? "").sort()
          : undefined;
      },
      {
        what: "the agent pods to be Ready",
        timeoutMs: readyMs,
        intervalMs: 1000,
        ...(signal ? { signal } : {}),
      },
    );
  } catch (error) {
    if (!(error instanceof RekindleError) || error.code !== "TIMEOUT") throw error;
    const troubled = pods.filter((pod) => !isPodReady(pod)).map(podTrouble);
    const imageTrouble = troubled.some((line) => /Image|Pull/i.test(line));
    throw new RekindleError(
      imageTrouble ? "INVALID_INPUT" : "HARNESS_FAILED",
      troubled.length === 0
        ? `no agent pod was scheduled within ${readyMs} ms: the cluster has no worker node it may run on`
        : `the agent pods were not Ready within ${readyMs} ms: ${troubled.join("; ")}`,
      {
        hint: imageTrouble
          ? `the nodes cannot run ${image}: load it onto them or push it where they pull from, and pass --image`
          : "see kubectl -n " + namespace + " describe pods",
        details: { pods: troubled },
      },
    );
  }
}

async function removeObjects(
  kc: k8s.KubeConfig,
  namespace: string,
  objects: readonly k8s.KubernetesObject[],
  goneMs: number,
): Promise<void> {
  await deleteManifests(kc, objects);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await pollUntil(
    async () => {
      try {
        await core.readNamespace({ name: namespace });
        return undefined;
      } catch (error) {
        if (isNotFound(error)) return true;
        throw error;
      }
    },
    { what: `namespace ${namespace} to be gone`, timeoutMs: goneMs, intervalMs: 1000 },
  );
}

/**
 * Reverts every fault the agents still hold (a revert request each, answered), then removes the
 * agent: DaemonSet, RBAC, namespace. The agents remove their state directory on the node as they stop.
 * Returns the requests it reverted ("node action").
 */
export async function uninstallAgent(
  kc: k8s.KubeConfig,
  options: AgentInstallOptions = {},
): Promise<string[]> {
  const namespace = options.namespace ?? AGENT_NAMESPACE;
  const progress = options.progress ?? silentProgress;
  const timeouts = { ...AGENT_INSTALL_TIMEOUTS, ...options.timeouts };
  const core = kc.makeApiClient(k8s.CoreV1Api);
  let requests: k8s.V1ConfigMap[];
  try {
    requests = (await core.listNamespacedConfigMap({ namespace, labelSelector: `${REQUEST_LABEL}=true` }))
      .items;
  } catch (error) {
    throw unreachableOrForbidden(error, `list the agent's requests in namespace ${namespace}`);
  }
  const client = new AgentClient(kc, {
    namespace,
    progress,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const reverted: string[] = [];
  for (const item of requests) {
    const request = decodeRequest(item);
    await client.revert(request.node, request.action);
    reverted.push(`${request.node} ${request.action}`);
  }
  const phase = progress.phase(`removing rekindle's node agent from namespace ${namespace}`);
  await removeObjects(kc, namespace, agentManifests(namespace, "unused"), timeouts.goneMs);
  phase.end("removed");
  return reverted;
}
