// `rekindle controller`: runs the recovery controller out-of-cluster (kubeconfig) or in-cluster.
// Everything is checked before anything starts: flags, the fence configuration file, the NodeFence
// CRD, and every fenceable node's template, driver and Secret. A refused start exits non-zero with
// nothing listening and nothing running.
import { readFileSync } from "node:fs";
import { RecoveryController } from "../controller/controller.js";
import { ensureNodeFenceCrd } from "../controller/crd.js";
import {
  fenceDriverRegistry,
  genericFenceDrivers,
  type FenceDriverRegistry,
} from "../controller/drivers/registry.js";
import type { FenceDriver } from "../controller/drivers/types.js";
import type { FenceConfig } from "../controller/fence-config.js";
import { loadFenceConfig } from "../controller/fence-config-parse.js";
import {
  controllerSettings,
  LEADER_LEASE_DURATION_MS,
  parseControllerFlags,
  type ControllerFlags,
} from "../controller/flags.js";
import { checkFenceTargets } from "../controller/fence-preflight.js";
import { LeaderElector } from "../controller/leader.js";
import { formatAddress } from "../controller/metrics-address.js";
import { ControllerMetrics } from "../controller/metrics.js";
import { DockerFenceDriver } from "../cluster/kind/fence-driver.js";
import { RekindleError } from "../errors.js";
import { loadKubeconfig } from "../kube/kubeconfig-load.js";

export const CONTROLLER_USAGE = `rekindle controller [--kubeconfig K] [--context C] [--fence-config fence.yaml | --sim-cluster DIR]
                    [--unhealthy-after 20s] [--check-interval 1s] [--max-unhealthy 40%] [--node-selector S]
                    [--namespace rekindle-system] [--metrics-bind-address HOST:PORT] [--power-on-after-fence]
                    [--leader-elect] [--install-crd] [--healthy-before-unfence 10s]
                    [--cleanup-timeout 2m] [--stale-wait 2m] [--driver-timeout 10s]
                    [--max-fences-per-window 3] [--fence-rate-window 1h] [--node-concurrency 8]
                    [--api-timeout 10s] [--pass-timeout 30s] [--max-retry-backoff 5m]
                    [--manual-confirm-timeout 10m] [--recovery-timeout 10m] [--watch-stale-after 3s]
                    [--node-monitor-grace-period 50s] [--silence-window D] [--fence-rate 6]
                    [--secondary-fence-rate 1] [--fence-burst 1] [--unhealthy-zone-threshold 0.55]
                    [--no-early-power-read] [--lease-read-interval 250ms]
      the recovery controller: detect → guard → fence → taint out-of-service → clean up → recover
      (with no --kubeconfig: the sim cluster's own with --sim-cluster, else the files $KUBECONFIG
      lists, merged as kubectl merges them, else ~/.kube/config, else in a pod its service account;
      --context picks a context of it, default its current one). It checks its configuration whole before it
      starts: --check-interval 100ms–1m, --unhealthy-after 1s–1h and at least 3 check intervals;
      every node's fence template, driver options and Secret. It needs the NodeFence CRD:
      --install-crd installs it when missing (--sim-cluster always does). --node-selector: only nodes
      this label selector (kubectl -l syntax) matches are fenced (default: every node).
      --metrics-bind-address HOST:PORT: where /metrics and /healthz listen (default 127.0.0.1:9464;
      in a pod 0.0.0.0:9464, behind deploy/controller/service.yaml); --metrics-port P keeps the
      default host and changes the port; 0 picks a free one. --namespace: default rekindle-system, in a
      pod the pod's own. No mass power-off: nodes of a zone silent together (last renewals within
      --silence-window, default one Lease renewal interval + 2 checks) are held until
      --node-monitor-grace-period (with --sim-cluster: its profile's) has passed, then fenced at
      --secondary-fence-rate per minute; every fence start counts against --fence-rate per minute.
      A node that missed a Lease renewal has its power read through its fence driver (not manual),
      and at once when its driver reports a power loss (docker, sim): one read off is lost at once,
      without unhealthyAfter, the hold or the rate (--no-early-power-read: never read early).
      --lease-read-interval: the node Lease watch is read at most this often (0: each renewal as it
      arrives; 0–5s, at most a quarter of --check-interval, the default's cap, and of
      --watch-stale-after): one wake-up per read, not one per renewal, for renewals seen up to that
      late (a side effect reads what has arrived first)`;

/** Where a pod's service account token says which namespace the pod runs in. */
const SERVICE_ACCOUNT_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/** The pod's namespace, if this runs in a pod with a service account mounted. */
export function podNamespace(file = SERVICE_ACCOUNT_NAMESPACE_FILE): string | undefined {
  try {
    const text = readFileSync(file, "utf8").trim();
    return text === "" ? undefined : text;
  } catch {
    return undefined;
  }
}

/**
 * The sim cluster named by --sim-cluster (its state directory or name): its fence driver and
 * kubeconfig. Exported for bench/controller.ts, which runs the controller on a sim as this does.
 */
export async function simControllerTarget(
  nameOrRoot: string,
): Promise<{ driver: FenceDriver; kubeconfig: string; nodeMonitorGracePeriodMs: number }> {
  // Loaded only for a sim cluster: the sim runtime stays out of an in-cluster controller.
  const [{ SimCluster }, { SimFenceDriver }] = await Promise.all([
    import("../cluster/sim/cluster.js"),
    import("../cluster/sim/fence-driver.js"),
  ]);
  const cluster = SimCluster.open(nameOrRoot);
  return {
    driver: new SimFenceDriver(cluster.layout.root),
    kubeconfig: cluster.kubeconfigPath,
    // Its kube-controller-manager's, the default of --node-monitor-grace-period.
    nodeMonitorGracePeriodMs: cluster.profile.nodeMonitorGracePeriodSeconds * 1000,
  };
}

/** The fence configuration of --fence-config, or of --sim-cluster (every node fenced by the sim driver). */
export function fenceConfiguration(values: ControllerFlags, drivers: FenceDriverRegistry): FenceConfig {
  if (values["fence-config"] !== undefined) return loadFenceConfig(values["fence-config"], drivers);
  if (values["sim-cluster"] !== undefined)
    return { templates: { sim: { driver: "sim" } }, defaultTemplate: "sim" };
  throw new RekindleError("INVALID_INPUT", "no fence configuration", {
    hint: "pass --fence-config fence.yaml, or --sim-cluster DIR for a sim cluster",
  });
}

export async function controllerCommand(args: string[], signal: AbortSignal): Promise<number> {
  const values = parseControllerFlags(args);
  const inCluster = (process.env["KUBERNETES_SERVICE_HOST"] ?? "") !== "";
  const namespace = inCluster ? podNamespace() : undefined;
  const sim =
    values["sim-cluster"] !== undefined ? await simControllerTarget(values["sim-cluster"]) : undefined;
  const { config, metrics } = controllerSettings(values, {
    inCluster,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(sim ? { nodeMonitorGracePeriodMs: sim.nodeMonitorGracePeriodMs } : {}),
  });
  const log = (m: string) => process.stderr.write(`${new Date().toISOString()} ${m}\n`);

  // --kubeconfig alone, else the sim cluster's, else $KUBECONFIG's files merged, ~/.kube/config,
  // or in a pod its service account.
  const path = values.kubeconfig ?? sim?.kubeconfig;
  const { kc } = loadKubeconfig({
    ...(path !== undefined ? { path } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
    inCluster: true,
  });

  // The generic drivers, then the providers' own (registered here, above the controller).
  const drivers = fenceDriverRegistry([
    ...genericFenceDrivers(kc),
    new DockerFenceDriver(),
    ...(sim ? [sim.driver] : []),
  ]);
  const fenceConfig = fenceConfiguration(values, drivers);

  // A sim cluster is a local throwaway its user administers: the CRD goes in without asking.
  const crd = await ensureNodeFenceCrd(kc, { install: values["install-crd"] || sim !== undefined });
  if (crd === "installed") log("installed the NodeFence CRD (nodefences.rekindle.dev)");
  const preflight = await checkFenceTargets({
    kc,
    fenceConfig,
    drivers,
    namespace: config.namespace,
    excludeLabel: config.excludeLabel,
    nodeSelector: config.nodeSelector,
  });
  if (preflight.unknownNodes.length > 0) {
    log(`fence configuration maps nodes not in the cluster (yet): ${preflight.unknownNodes.join(", ")}`);
  }
  if (signal.aborted) return 0;

  // Stopped (its loop ended, leadership released) however this function ends.
  await using controller = new RecoveryController({
    kc,
    config,
    fenceConfig,
    drivers,
    log,
    metrics: new ControllerMetrics({ processMetrics: true }),
    ...(values["leader-elect"]
      ? {
          leader: new LeaderElector({
            kc,
            namespace: config.namespace,
            identity: config.identity,
            leaseDurationMs: LEADER_LEASE_DURATION_MS,
            log,
          }),
        }
      : {}),
  });
  const { server, port: bound } = await controller.metrics.serve({
    ...metrics,
    health: () => controller.health(),
  });
  try {
    process.stderr.write(
      `rekindle controller ${config.identity}: unhealthyAfter ${config.unhealthyAfterMs} ms, checkInterval ${config.checkIntervalMs} ms, maxUnhealthy ${config.maxUnhealthy}, drivers ${[...drivers.keys()].join(", ")}; fencing checked for ${preflight.checked.length} nodes; metrics on ${formatAddress({ host: metrics.host, port: bound })}/metrics\n`,
    );
    controller.start();
    // Runs until Ctrl-C/SIGTERM, which the CLI turns into this signal's abort.
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      signal.addEventListener(
        "abort",
        () => {
          resolve();
        },
        { once: true },
      );
    });
  } finally {
    server.close();
  }
  return 0;
}
