// kind's attaching CSI driver (notes/csi-attach.md) on a real cluster: a StatefulSet's volume from
// the default class gets a VolumeAttachment that upstream's external-attacher marks attached, the
// kubelet lists the volume in node.status.volumesInUse, and after the pod moves the attachment
// moves with it and the data is still there. One cluster boot plus the CSI build (cached after).
import { expect } from "chai";
import { startKindCluster } from "../../lib/cluster/kind/start.js";
import type { KindCluster } from "../../lib/cluster/kind/cluster.js";
import { CSI_DRIVER, CSI_STORAGE_CLASS } from "../../lib/cluster/kind/csi/install.js";
import { imageRefs } from "../../lib/cluster/kind/image/recipe.js";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { k8s } from "../../lib/kube/client.js";
import { consoleProgress } from "../../lib/util/progress.js";
import { pollUntil } from "../../lib/util/time.js";
import { kindMissing, prepareKind } from "../support/kind-run.js";
import { requirePrerequisite } from "../support/prerequisites.js";
import { allowFor } from "../support/rekindle-run.js";

const CLUSTER = "csi-attach-it";
const NS = "csi-attach-it";
const WAIT = { timeoutMs: 180_000, intervalMs: 1_000 };

function statefulSet(): k8s.V1StatefulSet {
  return {
    metadata: { name: "db", namespace: NS },
    spec: {
      serviceName: "db",
      replicas: 1,
      selector: { matchLabels: { app: "db" } },
      template: {
        metadata: { labels: { app: "db" } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: "db",
              image: imageRefs().userland,
              imagePullPolicy: "Never",
              command: ["sh", "-c", "cat /proc/sys/kernel/hostname >> /data/writers; exec sleep 3600"],
              volumeMounts: [{ name: "data", mountPath: "/data" }],
            },
          ],
        },
      },
      // No storageClassName: the cluster's default class must be ours.
      volumeClaimTemplates: [
        {
          metadata: { name: "data" },
          spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
        },
      ],
    },
  };
}

describe("kind's attaching CSI driver (offline node image)", function () {
  let cluster: KindCluster | undefined;

  before(async function () {
    requirePrerequisite(this, await kindMissing());
    await prepareKind(this);
  });

  after(async function () {
    allowFor(this, 300_000);
    await cluster?.destroy();
  });

  it("a StatefulSet's volume is attached by external-attacher, in volumesInUse, and moves with its pod", async function () {
    allowFor(this, 20 * 60_000);
    cluster = await startKindCluster({
      name: CLUSTER,
      image: "rekindle",
      reuse: false,
      profile: TIMING_PROFILES.fast,
      csiStorage: true,
      progress: consoleProgress(),
    });
    expect(cluster.storage).to.deep.equal({ storageClass: CSI_STORAGE_CLASS, attachRequired: true });
    const kc = cluster.kubeConfig();
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const storage = kc.makeApiClient(k8s.StorageV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await kc.makeApiClient(k8s.AppsV1Api).createNamespacedStatefulSet({ namespace: NS, body: statefulSet() });

    const running = (exceptNode?: string) =>
      pollUntil(
        async () => {
          const pod = await core.readNamespacedPod({ name: "db-0", namespace: NS }).catch(() => undefined);
          const node = pod?.spec?.nodeName;
          return pod?.status?.phase === "Running" && node !== undefined && node !== exceptNode
            ? node
            : undefined;
        },
        { what: "db-0 Running", ...WAIT },
      );
    const first = await running();
    const claim = await core.readNamespacedPersistentVolumeClaim({ name: "data-db-0", namespace: NS });
    expect(claim.spec?.storageClassName).to.equal(CSI_STORAGE_CLASS);
    const pv = claim.spec?.volumeName ?? "";
    const attachedOn = (node: string) =>
      pollUntil(
        async () =>
          (await storage.listVolumeAttachment()).items.find(
            (va) =>
              va.spec.attacher === CSI_DRIVER &&
              va.spec.source.persistentVolumeName === pv &&
              va.spec.nodeName === node &&
              va.status?.attached === true,
          ),
        { what: `a VolumeAttachment of ${pv} on ${node}, attached`, ...WAIT },
      );
    await attachedOn(first);
    const inUse = `kubernetes.io/csi/${CSI_DRIVER}^${pv}`;
    await pollUntil(
      async () =>
        (await core.readNode({ name: first })).status?.volumesInUse?.includes(inUse) ? true : undefined,
      { what: `${inUse} in ${first}'s volumesInUse`, ...WAIT },
    );

    // Move the pod: no new pods on its node, delete it; the attachment follows it.
    await core.patchNode(
      { name: first, body: { spec: { unschedulable: true } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    await core.deleteNamespacedPod({ name: "db-0", namespace: NS });
    const second = await running(first);
    await attachedOn(second);
    await pollUntil(
      async () =>
        (await storage.listVolumeAttachment()).items.some(
          (va) => va.spec.source.persistentVolumeName === pv && va.spec.nodeName === first,
        )
          ? undefined
          : true,
      { what: `the VolumeAttachment of ${pv} on ${first} gone`, ...WAIT },
    );
    const writers = await cluster.nodes.exec(second, ["cat", `/var/rekindle-shared/${pv}/writers`]);
    expect(writers.output.trim().split("\n"), "both pods wrote to the one volume").to.deep.equal([
      "db-0",
      "db-0",
    ]);
  });
});
