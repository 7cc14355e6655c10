// A sim worker: its Node object (registered before its kwok starts) and how to run its kwok.
import { join } from "node:path";
import { RUN_LABEL } from "../../kube/apply.js";
import type { k8s } from "../../kube/client.js";
import type { DaemonSpec } from "../../util/daemon.js";
import type { TimingProfile } from "../profiles.js";
import type { SimLayout } from "./layout.js";
import { restartedLikeSystemd } from "./supervised.js";

export function workerName(index: number): string {
  return `worker-${index + 1}`;
}

export function workerNodeObject(name: string, zone: string, index: number, runId: string): k8s.V1Node {
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
      },
      annotations: {
        "kwok.x-k8s.io/node": "fake",
        "node.alpha.kubernetes.io/ttl": "0",
        // Without it the attach-detach controller creates no VolumeAttachment for this node.
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
      },
    },
    spec: {
      providerID: `kwok://${name}`,
      // Distinct pod CIDRs keep kwok's per-process IP pools from handing out the same pod IPs.
      podCIDR: `10.244.${index}.0/24`,
      podCIDRs: [`10.244.${index}.0/24`],
    },
  };
}

export function workerKwokSpec(args: {
  name: string;
  index: number;
  kwokBinary: string;
  layout: SimLayout;
  profile: TimingProfile;
  stagesFile: string;
}): DaemonSpec {
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
      `--node-ip=127.0.1.${index + 1}`,
      `--node-name=${name}`,
    ],
    // kwok always reads $KWOK_WORKDIR/kwok.yaml when present: keep it away from the user's ~/.kwok.
    env: { KWOK_WORKDIR: join(layout.kwokDir, name) },
    logPath: join(layout.logsDir, `kwok-${name}.log`),
  });
}
