// When kube-controller-manager's pod garbage collector (PodGC) passes. It runs every 20 s
// (gcCheckPeriod, upstream's constant) from whenever it started, and each pass force-deletes the
// pods that are terminating and not scheduled, marking them Failed first (gcUnscheduledTerminating).
// A probe pod that no scheduler picks (its schedulerName is nobody's), deleted while a finalizer
// holds it, is such a pod: the watch event of its Failed phase says when a pass ran, to the
// watch's latency (milliseconds on a local API server). The probe is removed, finalizer first,
// whether or not a pass came.
import { randomBytes } from "node:crypto";
import { errorMessage, RekindleError } from "../errors.js";
import { isNotFound, k8s } from "./client.js";
import { openWatch, type WatchLine } from "./watch-stream.js";

/** PodGC's period: gcCheckPeriod in kube-controller-manager (pkg/controller/podgc), not a flag. */
export const POD_GC_PASS_PERIOD_MS = 20_000;
/** Holds the deleted probe until PodGC has marked it Failed. */
export const POD_GC_PROBE_FINALIZER = "rekindle.dev/podgc-probe";
/** Labels the probe pods (releasePodGcProbes finds what a killed run left). */
const PROBE_LABEL = { key: "rekindle.dev/probe", value: "podgc" } as const;
/** No scheduler has this name, so the probe stays unscheduled. */
const NO_SCHEDULER = "rekindle-nobody";

export interface PodGcPassOptions {
  /** Gives up after this long (ms). Default: two periods and 10 s (a busy kube-controller-manager). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** The clock the pass time is read on. Default Date.now. */
  now?: () => number;
}

function probePod(name: string): k8s.V1Pod {
  return {
    metadata: {
      name,
      labels: { "app.kubernetes.io/managed-by": "rekindle", [PROBE_LABEL.key]: PROBE_LABEL.value },
      finalizers: [POD_GC_PROBE_FINALIZER],
    },
    spec: {
      schedulerName: NO_SCHEDULER,
      // Never scheduled, so never pulled.
      containers: [{ name: "probe", image: "registry.k8s.io/pause:3.10" }],
    },
  };
}

function isFailed(line: WatchLine): boolean {
  const pod = line.object as { status?: { phase?: string } } | undefined;
  return (line.type === "MODIFIED" || line.type === "ADDED") && pod?.status?.phase === "Failed";
}

/**
 * Creates a probe pod in `namespace`, deletes it and resolves with the time (on `now`) PodGC's
 * next pass marked it Failed. Throws TIMEOUT when no pass came within the timeout (PodGC not
 * running: no kube-controller-manager, or its podgc controller disabled).
 */
export async function observePodGcPass(
  kc: k8s.KubeConfig,
  namespace: string,
  options: PodGcPassOptions = {},
): Promise<number> {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? 2 * POD_GC_PASS_PERIOD_MS + 10_000;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const name = `rekindle-podgc-probe-${randomBytes(3).toString("hex")}`;
  const created = await core.createNamespacedPod({ namespace, body: probePod(name) });
  const stop = new AbortController();
  const onAbort = () => {
    stop.abort();
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => {
    stop.abort();
  }, timeoutMs);
  try {
    let passedAt: number | undefined;
    const seen = new Promise<void>((resolve) => {
      stop.signal.addEventListener("abort", () => {
        resolve();
      });
      void openWatch(
        kc,
        `/api/v1/namespaces/${namespace}/pods`,
        {
          fieldSelector: `metadata.name=${name}`,
          resourceVersion: created.metadata?.resourceVersion ?? "0",
        },
        stop.signal,
        (line) => {
          if (passedAt === undefined && isFailed(line)) {
            passedAt = now();
            resolve();
          }
        },
      ).catch(() => {
        // A broken watch: the timeout says so.
      });
    });
    await core.deleteNamespacedPod({ namespace, name });
    await seen;
    if (passedAt !== undefined) return passedAt;
    options.signal?.throwIfAborted();
    throw new RekindleError(
      "TIMEOUT",
      `PodGC did not pass within ${timeoutMs / 1000}s: probe pod ${namespace}/${name} was not marked Failed`,
      { hint: "kube-controller-manager's pod garbage collector must run (its podgc controller enabled)" },
    );
  } finally {
    clearTimeout(timer);
    stop.abort();
    options.signal?.removeEventListener("abort", onAbort);
    await removeProbe(core, namespace, name);
  }
}

/**
 * Takes the finalizer off and deletes the probe (a delete that failed earlier left it whole); one
 * not found is gone already.
 */
async function removeProbe(core: k8s.CoreV1Api, namespace: string, name: string): Promise<void> {
  try {
    await core.patchNamespacedPod(
      { namespace, name, body: { metadata: { finalizers: null } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    await core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 });
  } catch (error) {
    if (isNotFound(error)) return;
    throw new RekindleError(
      "COMMAND_FAILED",
      `probe pod ${namespace}/${name} not removed (finalizer ${POD_GC_PROBE_FINALIZER}): ${errorMessage(error)}`,
      {
        hint: `kubectl -n ${namespace} patch pod ${name} --type merge -p '{"metadata":{"finalizers":null}}'`,
      },
    );
  }
}

/**
 * Removes the probe pods a run killed while it waited for a pass left in `namespace` (their
 * finalizer would hold the namespace's deletion forever). Returns how many.
 */
export async function releasePodGcProbes(kc: k8s.KubeConfig, namespace: string): Promise<number> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const probes = await core.listNamespacedPod({
    namespace,
    labelSelector: `${PROBE_LABEL.key}=${PROBE_LABEL.value}`,
  });
  for (const pod of probes.items) await removeProbe(core, namespace, pod.metadata?.name ?? "");
  return probes.items.length;
}
