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
  /** SIGTERM → SIGKILL grace when stopping a component. */
  componentStopGraceMs: 5_000,
} as const;
