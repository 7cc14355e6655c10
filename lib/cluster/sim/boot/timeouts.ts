// Every wait of the sim provider in one table, units in the names.

export const SIM_TIMEOUTS = {
  /** etcd answering /health. */
  etcdReadyMs: 60_000,
  /** kube-apiserver answering /readyz (first start migrates storage, RBAC bootstrap). */
  apiserverReadyMs: 120_000,
  /** controller-manager and scheduler answering /healthz. */
  controllerReadyMs: 60_000,
  /** The default ServiceAccount appearing (pods are refused before it exists). */
  defaultServiceAccountMs: 60_000,
  /** Every worker node reporting Ready after its kwok process starts. */
  nodesReadyMs: 60_000,
  /** Every node DaemonSet with a Ready pod on every worker, once the workers are Ready. */
  daemonSetsReadyMs: 60_000,
  /** The clock-skew webhook server answering /healthz after it is started. */
  clockWebhookReadyMs: 20_000,
  /** Added to the node and DaemonSet waits per worker: 1000 workers wait 200 s longer. */
  perWorkerMs: 200,
  /** SIGTERM → SIGKILL grace when stopping a component. */
  componentStopGraceMs: 5_000,
} as const;

/** A wait that grows with the cluster: `baseMs` plus SIM_TIMEOUTS.perWorkerMs per worker. */
export function scaledTimeoutMs(baseMs: number, workers: number): number {
  return baseMs + workers * SIM_TIMEOUTS.perWorkerMs;
}

/** Polls of the whole node and pod lists: every 0.5 s on small clusters, every 2 s past 100 nodes. */
export function readyPollIntervalMs(workers: number): number {
  return workers > 100 ? 2_000 : 500;
}
