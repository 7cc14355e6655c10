// Command lines of the control-plane components for a timing profile. Pure: no processes here.
import { join } from "node:path";
import type { TimingProfile } from "../../profiles.js";
import type { DaemonSpec } from "../../../util/daemon.js";
import type { SimBinaries } from "../../../build/sim-binaries.js";
import type { SimLayout } from "./layout.js";

export interface ControlPlanePorts {
  etcdClient: number;
  etcdPeer: number;
  apiserver: number;
  controllerManager: number;
  scheduler: number;
}

/** What every component's command line is made from: the binaries, the files, the ports, the profile. */
export interface ControlPlaneParts {
  bin: SimBinaries;
  layout: SimLayout;
  ports: ControlPlanePorts;
  profile: TimingProfile;
}

/** Service IPs are only allocated, never routed: no traffic goes to this range. */
export const SERVICE_CLUSTER_IP_RANGE = "10.96.0.0/16";

export function etcdSpec({ bin, layout, ports }: ControlPlaneParts): DaemonSpec {
  const client = `http://127.0.0.1:${ports.etcdClient}`;
  const peer = `http://127.0.0.1:${ports.etcdPeer}`;
  return {
    name: "etcd",
    command: bin.etcd,
    args: [
      "--name=rekindle",
      `--data-dir=${layout.etcdDataDir}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=rekindle=${peer}`,
      "--listen-metrics-urls=",
      // A throwaway test cluster: durability is not worth the fsync latency on a shared disk.
      "--unsafe-no-fsync",
      "--log-level=warn",
    ],
    logPath: join(layout.logsDir, "etcd.log"),
  };
}

export function apiserverSpec({ bin, layout, ports, profile }: ControlPlaneParts): DaemonSpec {
  return {
    name: "kube-apiserver",
    command: bin.kubeApiserver,
    args: [
      `--etcd-servers=http://127.0.0.1:${ports.etcdClient}`,
      "--bind-address=127.0.0.1",
      // Without it, a machine with no default route fails with "Unable to find suitable network address".
      "--advertise-address=127.0.0.1",
      `--secure-port=${ports.apiserver}`,
      `--cert-dir=${layout.apiserverCertDir}`,
      `--token-auth-file=${layout.tokenFile}`,
      "--authorization-mode=Node,RBAC",
      `--service-account-key-file=${layout.serviceAccountPublicKey}`,
      `--service-account-signing-key-file=${layout.serviceAccountPrivateKey}`,
      "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
      `--service-cluster-ip-range=${SERVICE_CLUSTER_IP_RANGE}`,
      // The loopback advertise address is not a valid endpoint; nothing in-cluster calls the apiserver.
      "--endpoint-reconciler-type=none",
      "--allow-privileged=true",
      `--default-not-ready-toleration-seconds=${profile.defaultNotReadyTolerationSeconds}`,
      `--default-unreachable-toleration-seconds=${profile.defaultUnreachableTolerationSeconds}`,
      "--profiling=false",
    ],
    logPath: join(layout.logsDir, "kube-apiserver.log"),
  };
}

/** Flags kube-controller-manager and kube-scheduler share: identity, loopback serving, one instance. */
function controllerBaseArgs(layout: SimLayout, component: string, port: number): string[] {
  return [
    `--kubeconfig=${layout.componentKubeconfig(component)}`,
    "--bind-address=127.0.0.1",
    `--secure-port=${port}`,
    "--leader-elect=false",
    "--profiling=false",
  ];
}

export function controllerManagerSpec({ bin, layout, ports, profile }: ControlPlaneParts): DaemonSpec {
  return {
    name: "kube-controller-manager",
    command: bin.kubeControllerManager,
    args: [
      ...controllerBaseArgs(layout, "kube-controller-manager", ports.controllerManager),
      "--use-service-account-credentials=true",
      `--service-account-private-key-file=${layout.serviceAccountPrivateKey}`,
      `--root-ca-file=${layout.apiserverCertificate}`,
      `--node-monitor-grace-period=${profile.nodeMonitorGracePeriodSeconds}s`,
      `--node-monitor-period=${profile.nodeMonitorPeriodSeconds}s`,
      `--node-startup-grace-period=${profile.nodeStartupGracePeriodSeconds}s`,
      `--node-eviction-rate=${profile.nodeEvictionRate}`,
      `--secondary-node-eviction-rate=${profile.secondaryNodeEvictionRate}`,
      `--unhealthy-zone-threshold=${profile.unhealthyZoneThreshold}`,
      `--large-cluster-size-threshold=${profile.largeClusterSizeThreshold}`,
      ...(profile.controllerManagerClient
        ? [
            `--kube-api-qps=${profile.controllerManagerClient.qps}`,
            `--kube-api-burst=${profile.controllerManagerClient.burst}`,
          ]
        : []),
      // v=2 logs every taint, eviction and force detach: the evidence behind a timeline.
      "--v=2",
    ],
    logPath: join(layout.logsDir, "kube-controller-manager.log"),
  };
}

export function schedulerSpec({ bin, layout, ports }: ControlPlaneParts): DaemonSpec {
  return {
    name: "kube-scheduler",
    command: bin.kubeScheduler,
    args: controllerBaseArgs(layout, "kube-scheduler", ports.scheduler),
    logPath: join(layout.logsDir, "kube-scheduler.log"),
  };
}
