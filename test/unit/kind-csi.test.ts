import { expect } from "chai";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  attacherWrapperGoMod,
  CSI_PLUGIN_SOURCES,
  csiBuildPlans,
  EXTERNAL_ATTACHER_VERSION,
  pluginVersion,
} from "../../lib/cluster/kind/csi/build.js";
import { csiImageTag } from "../../lib/cluster/kind/csi/image.js";
import {
  CSI_DRIVER,
  CSI_STORAGE_CLASS,
  deploySubstitutions,
  unregistered,
} from "../../lib/cluster/kind/csi/install.js";
import { SHARED_NODE_DIR } from "../../lib/cluster/kind/shared-storage.js";
import { KindStorage } from "../../lib/cluster/kind/storage.js";
import { parseManifests, substitute } from "../../lib/kube/apply.js";
import type { k8s } from "../../lib/kube/client.js";
import { deployPath } from "../../lib/util/project-files.js";

type Doc = k8s.KubernetesObject & { spec?: Record<string, unknown>; rules?: unknown; provisioner?: string };

function deployObjects(image = "docker.io/rekindle/csi:test"): Doc[] {
  const text = substitute(readFileSync(deployPath("csi", "deploy.yaml"), "utf8"), deploySubstitutions(image));
  expect(text, "every placeholder substituted").not.to.match(/@[A-Z_]+@/);
  return parseManifests(text, "deploy.yaml");
}

function find(objects: Doc[], kind: string, name: string): Doc {
  const object = objects.find((o) => o.kind === kind && o.metadata?.name === name);
  if (!object) throw new Error(`no ${kind}/${name}`);
  return object;
}

describe("kind's attaching CSI driver", function () {
  it("declares attachRequired: true and is the default class, provisioned by its driver", function () {
    const objects = deployObjects();
    const driver = find(objects, "CSIDriver", CSI_DRIVER);
    expect(driver.spec?.["attachRequired"]).to.equal(true);
    const sc = find(objects, "StorageClass", CSI_STORAGE_CLASS) as Doc & k8s.V1StorageClass;
    expect(sc.provisioner).to.equal(CSI_DRIVER);
    expect(sc.metadata?.annotations?.["storageclass.kubernetes.io/is-default-class"]).to.equal("true");
  });

  it("gives the attacher upstream's RBAC rules and runs every container from the loaded image, never pulling", function () {
    const objects = deployObjects("docker.io/rekindle/csi:x");
    const role = find(objects, "ClusterRole", "rekindle-csi-attacher") as Doc & k8s.V1ClusterRole;
    const rules = (role.rules ?? []).map((r) => `${(r.resources ?? []).join(",")}:${r.verbs.join(",")}`);
    // external-attacher v4.13.0 deploy/kubernetes/rbac.yaml, leader election (leases) left out.
    expect(rules).to.deep.equal([
      "persistentvolumes:get,list,watch,patch",
      "csinodes:get,list,watch",
      "volumeattachments:get,list,watch,patch",
      "volumeattachments/status:patch",
    ]);
    for (const name of ["csi-controller", "csi-node"]) {
      const kind = name === "csi-node" ? "DaemonSet" : "Deployment";
      const workload = find(objects, kind, name) as Doc & k8s.V1Deployment;
      for (const c of workload.spec?.template.spec?.containers ?? []) {
        expect(c.image, `${name}/${c.name}`).to.equal("docker.io/rekindle/csi:x");
        expect(c.imagePullPolicy, `${name}/${c.name}`).to.equal("Never");
      }
    }
  });

  it("runs the node plugin with the kubelet's directory shared both ways and its registration socket in plugins_registry", function () {
    const node = find(deployObjects(), "DaemonSet", "csi-node") as Doc & k8s.V1DaemonSet;
    const container = node.spec?.template.spec?.containers[0];
    expect(container?.securityContext?.privileged).to.equal(true);
    const kubelet = container?.volumeMounts?.find((m) => m.mountPath === "/var/lib/kubelet");
    expect(kubelet?.mountPropagation).to.equal("Bidirectional");
    expect(container?.volumeMounts?.some((m) => m.mountPath === SHARED_NODE_DIR)).to.equal(true);
    expect(container?.command).to.include(
      `--registration-socket=/var/lib/kubelet/plugins_registry/${CSI_DRIVER}-reg.sock`,
    );
    expect(container?.command).to.include(`--csi-socket=/var/lib/kubelet/plugins/${CSI_DRIVER}/csi.sock`);
  });

  it("names the driver as the plugin's Go source does", function () {
    expect(readFileSync(join(CSI_PLUGIN_SOURCES, "main.go"), "utf8")).to.include(
      `const DriverName = "${CSI_DRIVER}"`,
    );
  });

  it("builds upstream's external-attacher from its module and our plugin at a hash of its sources", function () {
    expect(attacherWrapperGoMod()).to.include(
      `require github.com/kubernetes-csi/external-attacher/v4 ${EXTERNAL_ATTACHER_VERSION}`,
    );
    const [attacher, plugin] = csiBuildPlans();
    expect(attacher?.packages).to.deep.equal([
      "github.com/kubernetes-csi/external-attacher/v4/cmd/csi-attacher",
    ]);
    expect(attacher?.cacheGroup).to.equal("kind");
    expect(plugin?.version).to.match(/^src-[0-9a-f]{10}$/);

    const copy = mkdtempSync(join(tmpdir(), "csi-src-"));
    for (const file of readdirSync(CSI_PLUGIN_SOURCES))
      copyFileSync(join(CSI_PLUGIN_SOURCES, file), join(copy, file));
    expect(pluginVersion(copy)).to.equal(plugin?.version);
    writeFileSync(join(copy, "extra_test.go"), "package main\n");
    expect(pluginVersion(copy), "tests are no build input").to.equal(plugin?.version);
    writeFileSync(join(copy, "extra.go"), "package main\n");
    expect(pluginVersion(copy), "a source is").not.to.equal(plugin?.version);
    expect(csiImageTag({ csiAttacher: "v4.13.0", csiShared: "src-0123456789" })).to.equal(
      "docker.io/rekindle/csi:v4.13.0-src-0123456789",
    );
  });

  it("lives outside deploy/kind: the node image's recipe hash does not cover it", function () {
    // recipeHash() hashes every file under deploy/kind: a plugin change there would rebuild the node image.
    expect(CSI_PLUGIN_SOURCES.startsWith(deployPath("kind"))).to.equal(false);
  });

  it("waits for the workers whose CSINode does not list the driver yet", function () {
    const csiNode = (name: string, drivers: string[]): k8s.V1CSINode => ({
      metadata: { name },
      spec: { drivers: drivers.map((d) => ({ name: d, nodeID: name })) },
    });
    // The API server sends drivers: null for a node whose kubelet registered none yet.
    const bare = { metadata: { name: "w4" }, spec: { drivers: null } } as unknown as k8s.V1CSINode;
    const nodes = [csiNode("w1", [CSI_DRIVER]), csiNode("w2", ["other"]), csiNode("cp", []), bare];
    expect(unregistered(nodes, ["w1", "w2", "w3", "w4"])).to.deep.equal(["w2", "w3", "w4"]);
  });

  it("keeps the suites on rekindle-shared until the CSI driver is installed", function () {
    expect(new KindStorage().settings).to.deep.equal({
      storageClass: "rekindle-shared",
      attachRequired: false,
    });
  });
});
