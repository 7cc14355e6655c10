// Storage on a cluster rekindle did not create: the class the scenarios' volume gets (--storage-class,
// else the default), whether it attaches (its CSIDriver), and the refusals for storage a volume
// cannot move on: named (exit 2), or the default (the scenarios with a volume skipped, saying why).
import { expect } from "chai";
import { ExistingCluster } from "../../lib/cluster/existing/cluster.js";
import { chooseExistingStorage, type StorageFacts } from "../../lib/cluster/existing/storage.js";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import type { ClusterUnderTest } from "../../lib/cluster/provider.js";
import { NODE_LOCAL_ANNOTATION, type StorageClassInfo } from "../../lib/kube/storage-classes.js";
import { faultPreflightLines } from "../../lib/run/fault-preflight.js";
import { familyGroups, skipReason } from "../../lib/run/suite.js";
import type { ScenarioDefinition } from "../../lib/scenario/harness.js";
import { SCENARIOS } from "../../suites/index.js";
import { rekindleThrow } from "../support/assertions.js";
import { list, startFakeApiServer } from "../support/fake-apiserver.js";

const LOCAL_PATH: StorageClassInfo = {
  name: "standard",
  provisioner: "rancher.io/local-path",
  isDefault: true,
};
const SHARED: StorageClassInfo = {
  name: "rekindle-shared",
  provisioner: "rekindle.dev/shared-hostpath",
  isDefault: false,
};
const STATIC: StorageClassInfo = {
  name: "shared-static",
  provisioner: "kubernetes.io/no-provisioner",
  isDefault: false,
  nodeLocal: false,
};
const CSI: StorageClassInfo = { name: "block", provisioner: "block.csi.example.com", isDefault: false };

function facts(over: Partial<StorageFacts> = {}): StorageFacts {
  return {
    classes: [LOCAL_PATH, SHARED, STATIC, CSI],
    csiDrivers: new Map(),
    availableVolumes: new Map(),
    ...over,
  };
}

describe("existing cluster storage", () => {
  it("a node-local default class: no storage, and the reason the volume scenarios are skipped with", () => {
    const chosen = chooseExistingStorage(facts());
    expect(chosen.storage).to.equal(undefined);
    expect(chosen.volumesStayPut).to.include(
      "StorageClass standard (rancher.io/local-path) keeps each volume on the node that first used it",
    );
    expect(chosen.volumesStayPut).to.include("--storage-class");
  });

  it("no default class: says so and lists the classes there are", () => {
    const chosen = chooseExistingStorage(facts({ classes: [CSI] }));
    expect(chosen.volumesStayPut).to.equal(
      "the cluster has no default StorageClass (it has: block); name one with --storage-class",
    );
  });

  it("a class marked movable, with no CSIDriver: taken, nothing to attach", () => {
    const chosen = chooseExistingStorage(facts(), "shared-static");
    expect(chosen.storage).to.deep.equal({ storageClass: "shared-static", attachRequired: false });
    expect(chosen.volumesStayPut).to.equal(undefined);
    expect(chosen.summary).to.include("--storage-class");
  });

  it("a CSI class attaches as its CSIDriver says (unset: true)", () => {
    const unset = chooseExistingStorage(
      facts({ csiDrivers: new Map([["block.csi.example.com", undefined]]) }),
      "block",
    );
    expect(unset.storage?.attachRequired).to.equal(true);
    const off = chooseExistingStorage(
      facts({ csiDrivers: new Map([["block.csi.example.com", false]]) }),
      "block",
    );
    expect(off.storage?.attachRequired).to.equal(false);
    expect(off.summary).to.include("CSIDriver block.csi.example.com attachRequired false");
  });

  it("refuses a named class the cluster lacks, or one a volume cannot move on (exit 2)", () => {
    const missing = rekindleThrow(() => chooseExistingStorage(facts(), "fast-ssd"));
    expect(missing.code).to.equal("INVALID_INPUT");
    expect(missing.message).to.equal("--storage-class fast-ssd: no such StorageClass in the cluster");
    expect(missing.hint).to.include("standard (default), rekindle-shared, shared-static, block");
    const local = rekindleThrow(() => chooseExistingStorage(facts(), "standard"));
    expect(local.code).to.equal("INVALID_INPUT");
    expect(local.message).to.include("so a StatefulSet pod with a volume could never move");
    const marked = rekindleThrow(() =>
      chooseExistingStorage(facts({ classes: [{ ...CSI, nodeLocal: true }] }), "block"),
    );
    expect(marked.message).to.include(`is marked ${NODE_LOCAL_ANNOTATION}: "true"`);
  });

  it("kind's rekindle-shared: refused without its run's provisioner, taken when volumes of it are there", () => {
    const refused = rekindleThrow(() => chooseExistingStorage(facts(), "rekindle-shared"));
    expect(refused.message).to.include(
      "is provisioned only inside a `rekindle run --provider kind` process (rekindle.dev/shared-hostpath)",
    );
    const premade = chooseExistingStorage(
      facts({ availableVolumes: new Map([["rekindle-shared", 2]]) }),
      "rekindle-shared",
    );
    expect(premade.storage).to.deep.equal({ storageClass: "rekindle-shared", attachRequired: false });
  });

  it("kind's rekindle-csi: refused without its run's provisioner, like rekindle-shared", () => {
    const refused = rekindleThrow(() =>
      chooseExistingStorage(
        facts({
          classes: [{ name: "rekindle-csi", provisioner: "shared.csi.rekindle.dev", isDefault: true }],
        }),
        "rekindle-csi",
      ),
    );
    expect(refused.message).to.include(
      "is provisioned only inside a `rekindle run --provider kind` process (shared.csi.rekindle.dev)",
    );
  });

  it("skips the built-in scenarios that deploy the volume, with the reason; not the others", () => {
    const all = Object.fromEntries(
      ["lifecycle", "partition", "pressure", "graceful-shutdown", "fencing"].map((c) => [c, {}]),
    );
    const cluster = {
      provider: "existing",
      capabilities: all,
      unsupported: {},
      volumesStayPut: "StorageClass standard keeps each volume on one node",
    } as unknown as ClusterUnderTest;
    const manual = SCENARIOS["node-loss"].find((s) => s.id === "node-loss/manual-out-of-service");
    expect(skipReason(cluster, manual as ScenarioDefinition)).to.equal(
      "its StatefulSet's volume must be able to follow the pod to another node: StorageClass standard keeps each volume on one node",
    );
    const noVolume = Object.values(SCENARIOS)
      .flat()
      .find(
        (s) => s.requires.every((r) => r in all) && !s.workloads("ns").some((w) => w.id === "statefulset"),
      );
    expect(noVolume, "a built-in scenario without the volume").to.not.equal(undefined);
    expect(skipReason(cluster, noVolume as ScenarioDefinition)).to.equal(undefined);
    expect(skipReason({ ...cluster, volumesStayPut: undefined }, manual as ScenarioDefinition)).to.equal(
      undefined,
    );
  });

  it("the cluster reads its classes and CSIDrivers; the preflight says which class the volume gets", async () => {
    const api = await startFakeApiServer({
      "GET /api/v1/nodes": () =>
        list("NodeList", [{ metadata: { name: "worker-1", labels: {} }, status: { conditions: [] } }]),
      "GET /apis/storage.k8s.io/v1/storageclasses": () =>
        list("StorageClassList", [
          {
            metadata: { name: "shared-static", annotations: { [NODE_LOCAL_ANNOTATION]: "false" } },
            provisioner: "kubernetes.io/no-provisioner",
          },
        ]),
      "GET /apis/storage.k8s.io/v1/csidrivers": () => list("CSIDriverList", []),
      "GET /api/v1/persistentvolumes": () => list("PersistentVolumeList", []),
    });
    try {
      const cluster = await ExistingCluster.open({
        kubeconfig: api.kubeconfigPath,
        storageClass: "shared-static",
        rails: { allowFaults: true, nodes: ["worker-1"] },
        knobs: false,
        profile: TIMING_PROFILES.fast,
      });
      expect(cluster.storage).to.deep.equal({ storageClass: "shared-static", attachRequired: false });
      const text = faultPreflightLines(cluster, familyGroups(["node-loss"])).join("\n");
      expect(text).to.include(
        "storage:   the StatefulSet's volume from StorageClass shared-static (nothing to attach)",
      );
      const refused = await ExistingCluster.open({ kubeconfig: api.kubeconfigPath, knobs: false }).then(
        (c) => c.volumesStayPut,
      );
      expect(refused).to.include("the cluster has no default StorageClass (it has: shared-static)");
    } finally {
      await api.close();
    }
  });
});
