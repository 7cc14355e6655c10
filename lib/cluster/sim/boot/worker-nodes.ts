// A sim worker: its Node object (registered before its kwok starts) and how to run the kwok that
// plays it: its own (`--manage-single-node`) or a shared one that selects its nodes by label
// (kubelet/kwok-groups.ts says which).
import { join } from "node:path";
import { RUN_LABEL } from "../../../kube/apply.js";
import type { k8s } from "../../../kube/client.js";
import type { DaemonSpec } from "../../../util/daemon.js";
import type { TimingProfile } from "../../profiles.js";
import { workerNodeIp, workerPodCidr } from "./addresses.js";
import { SIM_KWOK_GROUP_LABEL } from "../kubelet/kwok-groups.js";
import type { SimLayout } from "./layout.js";
import { restartedLikeSystemd } from "./supervised.js";

/** Set on fleet workers for good (the group label comes and goes): filler pods land only there. */
export const SIM_FLEET_LABEL = "kwok.rekindle.dev/fleet";
/** The node's InternalIP; the node Stage prefers it to kwok's --node-ip, one per shared kwok. */
export const SIM_NODE_IP_ANNOTATION = "kwok.rekindle.dev/node-ip";

export function workerName(index: number): string {
  return `worker-${index + 1}`;
}

export interface WorkerNodePlacement {
  zone: string;
  index: number;
  /** The shared kwok group that plays this node; undefined: its own kwok. */
  group?: string | undefined;
}

export function workerNodeObject(name: string, placement: WorkerNodePlacement, runId: string): k8s.V1Node {
  const { zone, index, group } = placement;
  return {
    metadata: {
      name,
      labels: {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node-role.kubernetes.io/worker": "",
        "topology.kubernetes.io/region": "sim",
        "topology.kubernetes.io/zone": zone,
        type: "kwok",
        [RUN_LABEL]: runId,
        ...(group === undefined ? {} : { [SIM_KWOK_GROUP_LABEL]: group, [SIM_FLEET_LABEL]: "true" }),
      },
      annotations: {
        "kwok.x-k8s.io/node": "fake",
        "node.alpha.kubernetes.io/ttl": "0",
        // Without it the attach-detach controller creates no VolumeAttachment for this node.
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        [SIM_NODE_IP_ANNOTATION]: workerNodeIp(index),
      },
    },
    spec: {
      providerID: `kwok://${name}`,
      // Distinct pod CIDRs keep kwok's per-node IP pools from handing out the same pod IPs.
      podCIDR: workerPodCidr(index),
      podCIDRs: [workerPodCidr(index)],
    },
  };
}

interface KwokSpecInput {
  kwokBinary: string;
  layout: SimLayout;
  profile: TimingProfile;
  stagesFile: string;
}

export function workerKwokSpec(args: KwokSpecInput & { name: string; index: number }): DaemonSpec {
  const { name, index, layout } = args;
  return restartedLikeSystemd({
    name: `kwok-${name}`,
    command: args.kwokBinary,
    args: [
      `--kubeconfig=${layout.componentKubeconfig("kwok")}`,
      `--manage-single-node=${name}`,
      `--node-lease-duration-seconds=${args.profile.nodeLeaseDurationSeconds}`,
      `--config=${args.stagesFile}`,
      // A loopback address: nothing ever connects to it, and if something did it stays on this machine.
      `--node-ip=${workerNodeIp(index)}`,
      `--node-name=${name}`,
    ],
    // kwok always reads $KWOK_WORKDIR/kwok.yaml when present: keep it away from the user's ~/.kwok.
    env: { KWOK_WORKDIR: join(layout.kwokDir, name) },
    logPath: join(layout.logsDir, `kwok-${name}.log`),
  });
}

/**
 * A kwok playing every node that carries its group label. At WARN it logs no Lease renewal (at
 * INFO it logs each one: hundreds a second at 1000 nodes).
 */
export function sharedKwokSpec(args: KwokSpecInput & { group: string }): DaemonSpec {
  const { group, layout } = args;
  return restartedLikeSystemd({
    name: `kwok-${group}`,
    command: args.kwokBinary,
    args: [
      `--kubeconfig=${layout.componentKubeconfig("kwok")}`,
      `--manage-nodes-with-label-selector=${SIM_KWOK_GROUP_LABEL}=${group}`,
      `--node-lease-duration-seconds=${args.profile.nodeLeaseDurationSeconds}`,
      `--config=${args.stagesFile}`,
      "-v=WARN",
    ],
    env: { KWOK_WORKDIR: join(layout.kwokDir, `group-${group}`) },
    logPath: join(layout.logsDir, `kwok-${group}.log`),
  });
}
