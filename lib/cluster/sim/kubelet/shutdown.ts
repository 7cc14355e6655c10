// Simulated graceful node shutdown: what the kubelet's shutdown manager does when systemd announces
// a shutdown, then the power-off. The node's kwok falls silent first (it would report Ready again),
// but the node stays on: the sim plays its kubelet, which renews the node's Lease at its cadence
// throughout (lease-renewal.ts) while it reports Ready=False "node is shutting down" and ends every
// active pod with reason Terminated, DaemonSet pods included (the kubelet makes no exception for
// them), in the kubelet's two groups: regular pods first, critical ones (priority >=
// system-cluster-critical, such as a system-node-critical kube-proxy or CNI agent) only after the
// regular group is done. Each container takes the runtime's time to stop. The node's volumesInUse
// is left to its kubelet's status cadence (volumes.ts), so a status write may or may not
// come between the pods' end and the power-off, as on kind. The power-off comes last, when the
// pods have ended: a power-loss notice (fence-driver.ts) then comes when a real node's would.
import { setTimeout as delay } from "node:timers/promises";
import { isPodTerminal, type k8s } from "../../../kube/client.js";
import { SYSTEM_CRITICAL_PRIORITY } from "../../../kube/pod-kinds.js";
import { podsOnNode } from "../../../kube/queries.js";
import { errorMessage } from "../../../errors.js";
import { setNodeCondition, terminatePod } from "./writes.js";
import { renewNodeLeaseUntil } from "./lease-renewal.js";

/**
 * From the shutdown's start until the kubelet says "node is shutting down": kind's logind tells
 * the kubelet's inhibitor, and its status write lands 0.7 s after the fault (p50 of 3 runs,
 * docs/calibration.md); the sim's own writes add about 0.1 s.
 */
export const SHUTDOWN_NOTICE_MS = 600;
/**
 * A container's stop by the runtime, and the unmount of a pod's volumes on top: on kind the fixture
 * pods ended 0.39–0.82 s after the node said it was shutting down, a PVC's (rekindle-csi) 0.44–0.79 s
 * (graceful-shutdown/no-fence, 5 runs, 2026-11-26; 0.9 and 1.6 s in the 3 runs of 2026-11-23, before
 * the CSI driver). The sim's own writes add about 0.07 s.
 */
export const CONTAINER_STOP_MS = 450;
export const VOLUME_UNMOUNT_MS = 100;

/**
 * The kubelet's shutdown groups without shutdownGracePeriodByPodPriority (its migrateConfig and
 * groupByPriority): priority below system-cluster-critical, then the rest. Pods that have ended
 * are in neither.
 */
export function shutdownGroups(pods: readonly k8s.V1Pod[]): [regular: k8s.V1Pod[], critical: k8s.V1Pod[]] {
  const active = pods.filter((p) => !isPodTerminal(p));
  const critical = (p: k8s.V1Pod) => (p.spec?.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY;
  return [active.filter((p) => !critical(p)), active.filter(critical)];
}

/** How long the runtime takes to stop the pod's containers and unmount its claims. */
export function podStopMs(pod: k8s.V1Pod): number {
  const claims = (pod.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim !== undefined);
  return CONTAINER_STOP_MS + (claims ? VOLUME_UNMOUNT_MS : 0);
}

export const NODE_SHUTDOWN_MESSAGE = "node is shutting down";
export const SHUTDOWN_POD_MESSAGE = "Pod was terminated in response to imminent node shutdown.";

/** The node's part of a graceful shutdown, as its provider does it. */
export interface ShutdownPower {
  /** The node's agent stops writing; the node stays on (SimCluster.silenceNode). */
  silence: () => Promise<void>;
  /** The power-off at the end, recorded (SimCluster.stopNode). Also run when a step failed. */
  powerOff: () => Promise<void>;
  /** Told what did not go as a kubelet's would (a Lease renewal that failed). */
  log: (message: string) => void;
}

export async function simulateGracefulShutdown(
  kc: k8s.KubeConfig,
  nodeName: string,
  power: ShutdownPower,
): Promise<{ terminated: string[] }> {
  await power.silence();
  const stopRenewing = new AbortController();
  const renewing = renewNodeLeaseUntil(kc, nodeName, stopRenewing.signal).catch((error: unknown) => {
    power.log(`node ${nodeName}: Lease renewal during the shutdown failed: ${errorMessage(error)}`);
  });
  const terminated: string[] = [];
  try {
    await delay(SHUTDOWN_NOTICE_MS);
    await setNodeCondition(kc, nodeName, {
      type: "Ready",
      status: "False",
      reason: "KubeletNotReady",
      message: NODE_SHUTDOWN_MESSAGE,
    });
    // Two groups, as the kubelet does: regular pods, then critical ones once the first are done.
    for (const phase of shutdownGroups(await podsOnNode(kc, nodeName))) {
      await Promise.all(
        phase.map(async (pod) => {
          const namespace = pod.metadata?.namespace ?? "";
          const name = pod.metadata?.name ?? "";
          await delay(podStopMs(pod));
          await terminatePod(kc, namespace, name, {
            reason: "Terminated",
            message: SHUTDOWN_POD_MESSAGE,
            disruptionReason: "TerminationByKubelet",
          });
          terminated.push(`${namespace}/${name}`);
        }),
      );
    }
  } finally {
    stopRenewing.abort();
    await renewing;
    await power.powerOff();
  }
  return { terminated };
}
