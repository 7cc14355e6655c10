// deploy/controller as a kustomize base: it lists the files rekindle applies itself, each exists
// and parses; a `namespace:` overlay can move it (no object is pinned to another namespace); the
// PodDisruptionBudget, PriorityClass and Service fit the Deployment; the optional ServiceMonitor
// component fits the Service. test/integration/controller-kustomize.test.ts builds the base and a
// namespace overlay with kubectl.
import { expect } from "chai";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { podNamespace } from "../../lib/cli/controller-command.js";
import { CONTROLLER_FIXTURES, fixtureObjectsToRemove } from "../../lib/cluster/in-cluster-controller.js";
import { controllerSettings, parseControllerFlags } from "../../lib/controller/flags.js";
import { parseManifests } from "../../lib/kube/apply.js";
import { CLUSTER_SCOPED_KINDS } from "../../lib/scenario-file/manifests.js";
import type { k8s } from "../../lib/kube/client.js";
import { deployPath } from "../../lib/util/project-files.js";
import { expectNoneOf } from "../support/assertions.js";

const DIR = deployPath("controller");
interface Kustomization {
  apiVersion: string;
  kind: string;
  resources?: string[];
  components?: string[];
  namespace?: string;
}

function kustomization(dir: string): Kustomization {
  return parse(readFileSync(join(dir, "kustomization.yaml"), "utf8")) as Kustomization;
}

function objectsOf(dir: string, files: readonly string[]): k8s.KubernetesObject[] {
  return files.flatMap((file) => parseManifests(readFileSync(join(dir, file), "utf8"), file));
}

const id = (o: k8s.KubernetesObject): string =>
  `${String(o.kind)}/${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;

/** The one object of `kind` (the test fails if there are more or none). */
function one(objects: readonly k8s.KubernetesObject[], kind: string): k8s.KubernetesObject {
  const found = objects.filter((o) => o.kind === kind);
  expect(found, kind).to.have.length(1);
  return found[0] ?? {};
}

describe("the controller's kustomize base (deploy/controller)", function () {
  const base = kustomization(DIR);
  const objects = objectsOf(DIR, base.resources ?? []);
  const namespace = (one(objects, "Namespace") as k8s.V1Namespace).metadata?.name ?? "";
  const deployment = one(objects, "Deployment") as k8s.V1Deployment;
  const podLabels = deployment.spec?.template.metadata?.labels ?? {};
  const service = one(objects, "Service") as k8s.V1Service;

  it("lists exactly the files rekindle applies itself, each there and parsing", function () {
    expect(base.kind).to.equal("Kustomization");
    expect([...(base.resources ?? [])].sort()).to.deep.equal([...CONTROLLER_FIXTURES].sort());
    for (const file of base.resources ?? []) {
      expect(existsSync(join(DIR, file)), file).to.equal(true);
      expect(objectsOf(DIR, [file]), file).to.not.be.empty;
    }
    expect(base.namespace, "the base leaves the namespace to its overlays").to.equal(undefined);
  });

  it("pins no object to another namespace, so an overlay's `namespace:` moves all of it", function () {
    for (const object of objects) {
      if (object.kind === "Namespace" || CLUSTER_SCOPED_KINDS.has(String(object.kind))) {
        expect(object.metadata?.namespace, id(object)).to.equal(undefined);
      } else {
        expect(object.metadata?.namespace, id(object)).to.equal(namespace);
      }
    }
    // The Lease and Event rights the controller needs outside its namespace are ClusterRole rules.
    const role = one(objects, "ClusterRole") as k8s.V1ClusterRole;
    const rule = (resource: string) => role.rules?.find((r) => r.resources?.includes(resource))?.verbs;
    expect(rule("leases")).to.include.members(["get", "list", "watch"]).and.not.include("update");
    expect(rule("events")).to.deep.equal(["create"]);
  });

  it("keeps one of the two replicas through a voluntary disruption", function () {
    const pdb = one(objects, "PodDisruptionBudget") as k8s.V1PodDisruptionBudget;
    expect(deployment.spec?.replicas).to.equal(2);
    expect(pdb.spec?.minAvailable).to.equal(1);
    expect(pdb.spec?.selector?.matchLabels).to.deep.equal(deployment.spec?.selector.matchLabels);
  });

  it("runs the pods at a PriorityClass of the user range that exists beside them", function () {
    const priority = one(objects, "PriorityClass") as k8s.V1PriorityClass;
    expect(deployment.spec?.template.spec?.priorityClassName).to.equal(priority.metadata?.name);
    expect(priority.value).to.be.greaterThan(0).and.at.most(1_000_000_000);
    expect(priority.globalDefault).to.equal(false);
    expect(CONTROLLER_FIXTURES.indexOf("priorityclass.yaml")).to.be.lessThan(
      CONTROLLER_FIXTURES.indexOf("deployment.yaml"),
    );
  });

  it("removes the cluster-scoped objects it applied, the PriorityClass among them, but not the CRD", function () {
    const removed = fixtureObjectsToRemove().map((o) => String(o.kind));
    expect(removed).to.include.members(["PriorityClass", "ClusterRole", "ClusterRoleBinding", "Service"]);
    expectNoneOf(removed, ["CustomResourceDefinition", "Namespace"], "the objects removed");
  });

  it("offers a ServiceMonitor component that scrapes the metrics Service's port", function () {
    const dir = join(DIR, "servicemonitor");
    const component = kustomization(dir);
    expect(component.kind).to.equal("Component");
    const monitor = one(
      objectsOf(dir, component.resources ?? []),
      "ServiceMonitor",
    ) as k8s.KubernetesObject & { spec?: ServiceMonitorSpec };
    expect(monitor.metadata?.namespace).to.equal(namespace);
    for (const [key, value] of Object.entries(monitor.spec?.selector.matchLabels ?? {})) {
      expect(service.metadata?.labels?.[key], key).to.equal(value);
    }
    const ports = service.spec?.ports?.map((p) => p.name);
    expect(monitor.spec?.endpoints.map((e) => e.port)).to.deep.equal(ports);
    for (const [key, value] of Object.entries(service.spec?.selector ?? {})) {
      expect(podLabels[key], key).to.equal(value);
    }
  });

  it("runs the controller in whatever namespace its pod is in, unless --namespace says", function () {
    const dir = mkdtempSync(join(tmpdir(), "rekindle-sa-"));
    writeFileSync(join(dir, "namespace"), "ops\n");
    expect(podNamespace(join(dir, "namespace"))).to.equal("ops");
    expect(podNamespace(join(dir, "missing"))).to.equal(undefined);
    const settings = (...args: string[]) =>
      controllerSettings(parseControllerFlags(args), { inCluster: true, namespace: "ops" }).config.namespace;
    expect(settings()).to.equal("ops");
    expect(settings("--namespace", "other")).to.equal("other");
    expect(controllerSettings(parseControllerFlags([])).config.namespace).to.equal("rekindle-system");
  });
});

interface ServiceMonitorSpec {
  selector: { matchLabels?: Record<string, string> };
  endpoints: { port: string }[];
}
