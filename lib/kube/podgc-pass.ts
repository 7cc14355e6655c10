// When kube-controller-manager's pod garbage collector (PodGC) passes. It runs every 20 s
// (gcCheckPeriod, upstream's constant) from whenever it started, and each pass force-deletes the
// pods that are terminating and not scheduled, marking them Failed first (gcUnscheduledTerminating).
// A probe pod that no scheduler picks (its schedulerName is nobody's), deleted while a finalizer
// holds it, is such a pod: the watch event of its Failed phase says when a pass ran, to the
// watch's latency (milliseconds on a local API server). The probe is removed, finalizer first,
// whether or not a pass came.
import { randomBytes } from "node:crypto";
import { errorMessage, RekindleError } from "../errors.js";
import { boundedSignal } from "../util/abort.js";
import { isNotFound, k8s } from "./client.js";
import { openWatch, type WatchLine } from "./watch-stream.js";

/** PodGC's loop: every 20 s (gcCheckPeriod in kube-controller-manager's pkg/controller/podgc, not a flag). */
export const POD_GC_PERIOD_MS = 20_000;
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
 * Creates a probe pod in `namespace`, deletes it and resolves with the time (Date.now) PodGC's next
 * pass marked it Failed. Throws TIMEOUT when no pass came within the timeout (PodGC not running: no
 * kube-controller-manager, or its podgc controller disabled).
 */
export async function observePodGcPass(
  kc: k8s.KubeConfig,
  namespace: string,
  options: PodGcPassOptions = {},
): Promise<number> {
  const timeoutMs = options.timeoutMs ?? 2 * POD_GC_PERIOD_MS + 10_000;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const name = `rekindle-podgc-probe-${randomBytes(3).toString("hex")}`;
  const created = await core.createNamespacedPod({ namespace, body: probePod(name) });
  // Ends the watch once the pass is seen; bounded by the caller's signal and the timeout.
  const seenIt = new AbortController();
  const parent = options.signal ? AbortSignal.any([options.signal, seenIt.signal]) : seenIt.signal;
  const bounded = boundedSignal(
    parent,
    timeoutMs,
    `waiting for a PodGC pass (probe pod ${namespace}/${name})`,
  );
  try {
    let passedAt: number | undefined;
    let watchError: unknown;
    // Settles when the watch ends: the pass seen, the timeout or the caller's abort, or a broken watch.
    const ended = new Promise<void>((resolve) => {
      const path = `/api/v1/namespaces/${namespace}/pods`;
      const query = {
        fieldSelector: `metadata.name=${name}`,
        resourceVersion: created.metadata?.resourceVersion ?? "0",
      };
      openWatch(kc, path, query, bounded.signal, (line) => {
        if (passedAt !== undefined || !isFailed(line)) return;
        passedAt = Date.now();
        seenIt.abort();
      })
        .then((watch) => watch.ended)
        .catch((error: unknown) => {
          if (!bounded.signal.aborted) watchError = error; // not the abort that ended it
        })
        .finally(resolve);
    });
    await core.deleteNamespacedPod({ namespace, name });
    await ended;
    if (passedAt !== undefined) return passedAt;
    options.signal?.throwIfAborted();
    throw new RekindleError(
      "TIMEOUT",
      watchError === undefined
        ? `PodGC did not pass within ${timeoutMs / 1000}s: probe pod ${namespace}/${name} was not marked Failed`
        : `the watch on probe pod ${namespace}/${name} broke before PodGC passed: ${errorMessage(watchError)}`,
      { hint: "kube-controller-manager's pod garbage collector must run (its podgc controller enabled)" },
    );
  } finally {
    bounded.dispose();
    seenIt.abort();
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
 * finalizer would hold the namespace's deletion forever).
 */
export async function releasePodGcProbes(kc: k8s.KubeConfig, namespace: string): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const probes = await core.listNamespacedPod({
    namespace,
    labelSelector: `${PROBE_LABEL.key}=${PROBE_LABEL.value}`,
  });
  for (const pod of probes.items) await removeProbe(core, namespace, pod.metadata?.name ?? "");
}
