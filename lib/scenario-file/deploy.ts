// Deploys a scenario file's workloads into the scenario's namespace: a server-side dry run of
// every object first (a manifest the API server rejects is the user's input, refused with its
// message before anything is created), then server-side apply, then each workload Ready.
import { readyEndpointKeys } from "../observe/endpoint-slice-transitions.js";
import { RekindleError } from "../errors.js";
import { RUN_LABEL, applyManifests, deleteManifests } from "../kube/apply.js";
import { isPodReady, k8s } from "../kube/client.js";
import type { ScenarioContext } from "../scenario/harness.js";
import { pollUntil } from "../util/time.js";
import { recreateStuckPending } from "../workloads/stuck-pending.js";
import { CLUSTER_SCOPED_KINDS, placed, type WorkloadObjects } from "./manifests.js";

/** How many of a workload's pods must be Ready before the fault, and which labels select them. */
export interface ReadyTarget {
  workload: string;
  matchLabels: Record<string, string>;
  /** null: a DaemonSet, Ready on every node it is scheduled to. */
  replicas: number | null;
  /** The Service that fronts it: Ready also means every Ready pod is among its ready endpoints. */
  service?: string;
}

/** The API server's own message in a failed request (its Status body), else the error's. */
function apiMessage(error: unknown): string {
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
  const body = (cause as { body?: unknown }).body;
  if (typeof body === "string") {
    try {
      const parsed = JSON.parse(body) as { message?: unknown };
      if (typeof parsed.message === "string") return parsed.message;
    } catch {
      return body;
    }
  }
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * Server-side dry run of every object, placed as it will be (namespaced ones into `namespace`,
 * which must exist: the caller passes an existing one such as "default" before the scenario's own
 * is created). Throws INVALID_INPUT quoting the API server's message for the first it rejects.
 */
export async function dryRunWorkloads(
  kc: k8s.KubeConfig,
  file: string,
  workloads: readonly WorkloadObjects[],
  namespace: string,
): Promise<void> {
  for (const { workload, objects } of workloads) {
    for (const object of objects) {
      try {
        await applyManifests(kc, [placed(object, namespace)], { dryRun: true });
      } catch (error) {
        const name = `${String(object.kind)}/${object.metadata?.name ?? "?"}`;
        throw new RekindleError(
          "INVALID_INPUT",
          `${file}: workload ${workload.name}: the API server rejects ${name}: ${apiMessage(error)}`,
          {
            hint: "fix the manifest; rekindle checked it with a server-side dry run before starting anything",
            cause: error,
          },
        );
      }
    }
  }
}

async function readyCount(
  kc: k8s.KubeConfig,
  namespace: string,
  matchLabels: Record<string, string>,
): Promise<number> {
  const labelSelector = Object.entries(matchLabels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const pods = (await kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace, labelSelector })).items;
  // See lib/workloads/stuck-pending.ts: a scheduler race can leave a pod unplaced after its claim binds.
  await recreateStuckPending(kc, namespace, pods);
  return pods.filter((p) => p.metadata?.deletionTimestamp === undefined && isPodReady(p)).length;
}

/**
 * The Service's ready endpoints (over its EndpointSlices, each pod once). The EndpointSlice
 * controller lists a pod some time after it turns Ready; a fault in that gap would count as the
 * Service losing endpoints at the fault (observe/serving.ts), as a loaded CI machine saw.
 */
async function serviceReadyEndpoints(
  kc: k8s.KubeConfig,
  namespace: string,
  service: string,
): Promise<number> {
  const slices = await kc.makeApiClient(k8s.DiscoveryV1Api).listNamespacedEndpointSlice({
    namespace,
    labelSelector: `kubernetes.io/service-name=${service}`,
  });
  return new Set(slices.items.flatMap((slice) => readyEndpointKeys(slice))).size;
}

async function daemonSetWanted(
  kc: k8s.KubeConfig,
  namespace: string,
  matchLabels: Record<string, string>,
): Promise<number> {
  const sets = (await kc.makeApiClient(k8s.AppsV1Api).listNamespacedDaemonSet({ namespace })).items;
  const set = sets.find((s) =>
    Object.entries(matchLabels).every(([k, v]) => s.spec?.template.metadata?.labels?.[k] === v),
  );
  return set?.status?.desiredNumberScheduled ?? 0;
}

/**
 * Applies the workloads in the file's order, each Ready before the next is applied (so a workload
 * that prefers another's node finds it placed), cluster-scoped objects first (each deleted again
 * by the undo; namespaced ones go with the scenario's namespace).
 */
export async function deployWorkloads(
  context: ScenarioContext,
  workloads: readonly WorkloadObjects[],
  ready: readonly ReadyTarget[],
  options: { readyTimeoutMs?: number } = {},
): Promise<void> {
  const { kc, namespace, steps } = context;
  const labels = { [RUN_LABEL]: context.cluster.runId };
  const clusterScoped = workloads
    .flatMap((w) => w.objects)
    .filter((o) => CLUSTER_SCOPED_KINDS.has(String(o.kind)));
  if (clusterScoped.length > 0) {
    const applied = await steps.step(
      `apply ${clusterScoped.map((o) => `${String(o.kind)}/${o.metadata?.name ?? "?"}`).join(", ")}`,
      () => applyManifests(kc, clusterScoped, { labels }),
    );
    steps.registerUndo("delete the workloads' cluster-scoped objects", () => deleteManifests(kc, applied));
  }
  const timeoutMs = options.readyTimeoutMs ?? 180_000;
  for (const { workload, objects } of workloads) {
    const namespaced = objects
      .filter((o) => !CLUSTER_SCOPED_KINDS.has(String(o.kind)))
      .map((o) => placed(o, namespace));
    await steps.step(`apply workload ${workload.name} (${namespaced.length} object(s))`, () =>
      applyManifests(kc, namespaced, { labels }),
    );
    const target = ready.find((r) => r.workload === workload.name);
    if (target === undefined) continue;
    await steps.step(`await workload ${target.workload} Ready`, () =>
      pollUntil(
        async () => {
          const wanted = target.replicas ?? (await daemonSetWanted(kc, namespace, target.matchLabels));
          const ready = await readyCount(kc, namespace, target.matchLabels);
          if (wanted <= 0 || ready < wanted) return undefined;
          if (target.service === undefined) return true;
          return (await serviceReadyEndpoints(kc, namespace, target.service)) >= ready ? true : undefined;
        },
        {
          what: `workload ${target.workload}: ${target.replicas ?? "every scheduled"} pod(s) Ready in ${namespace}${target.service === undefined ? "" : `, each a ready endpoint of Service ${target.service}`}`,
          timeoutMs,
          intervalMs: 500,
          ...(context.signal ? { signal: context.signal } : {}),
        },
      ),
    );
  }
}
