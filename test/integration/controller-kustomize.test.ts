// deploy/controller built by kubectl kustomize (the sim's own kubectl, so no tool the machine may
// lack): the base gives exactly the objects of its files, and an overlay that sets `namespace:` and
// adds the ServiceMonitor component moves every namespaced object, the Namespace and the bindings'
// subjects, and nothing cluster-scoped. No cluster: the structure checks are in
// test/unit/controller-kustomize.test.ts.
import { expect } from "chai";
import { execa } from "execa";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parse } from "yaml";
import { ensureSimBinaries } from "../../lib/build/sim-binaries.js";
import { parseManifests } from "../../lib/kube/apply.js";
import { CLUSTER_SCOPED_KINDS } from "../../lib/scenario-file/manifests.js";
import type { k8s } from "../../lib/kube/client.js";
import { deployPath } from "../../lib/util/project-files.js";
import { allowFor } from "../support/rekindle-run.js";

const DIR = deployPath("controller");
const id = (o: k8s.KubernetesObject): string =>
  `${String(o.kind)}/${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;

async function build(dir: string): Promise<k8s.KubernetesObject[]> {
  const { kubectl } = await ensureSimBinaries();
  const result = await execa(kubectl, ["kustomize", dir], { timeout: 60_000 });
  return parseManifests(result.stdout, `kubectl kustomize ${dir}`);
}

describe("the controller's kustomize base, built by kubectl kustomize", function () {
  it("builds into exactly the objects of the files it lists", async function () {
    allowFor(this, 30 * 60_000);
    const { resources = [] } = parse(readFileSync(join(DIR, "kustomization.yaml"), "utf8")) as {
      resources?: string[];
    };
    const files = resources.flatMap((file) => parseManifests(readFileSync(join(DIR, file), "utf8"), file));
    expect((await build(DIR)).map(id).sort()).to.deep.equal(files.map(id).sort());
  });

  it("moves everything namespaced, the Namespace and the bindings' subjects with an overlay's `namespace:`", async function () {
    allowFor(this, 30 * 60_000);
    const overlay = mkdtempSync(join(tmpdir(), "rekindle-overlay-"));
    const path = relative(overlay, DIR);
    writeFileSync(
      join(overlay, "kustomization.yaml"),
      [
        "apiVersion: kustomize.config.k8s.io/v1beta1",
        "kind: Kustomization",
        "namespace: ops",
        `resources: [${path}]`,
        `components: [${path}/servicemonitor]`,
        "",
      ].join("\n"),
    );
    const built = await build(overlay);
    expect(built.map((o) => String(o.kind))).to.include.members(["ServiceMonitor", "PriorityClass"]);
    for (const object of built) {
      if (object.kind === "Namespace") expect(object.metadata?.name).to.equal("ops");
      else if (CLUSTER_SCOPED_KINDS.has(String(object.kind)))
        expect(object.metadata?.namespace).to.equal(undefined);
      else expect(object.metadata?.namespace, id(object)).to.equal("ops");
      for (const subject of (object as k8s.V1RoleBinding).subjects ?? []) {
        expect(subject.namespace, id(object)).to.equal("ops");
      }
    }
  });
});
