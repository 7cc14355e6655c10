import { expect } from "chai";
import { appendFileSync, cpSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kindArgs } from "../../lib/cluster/kind/cli.js";
import { nodeContainerdConfig } from "../../lib/cluster/kind/image/node-root.js";
import {
  imageRefs,
  NODE_IMAGE_PARTS,
  NODE_IMAGE_VERSIONS,
  nodeImageTag,
  recipeHash,
} from "../../lib/cluster/kind/image/recipe.js";
import { checkNodeImageChoice, defaultNodeImageChoice } from "../../lib/cluster/kind/node-image-choice.js";
import { RekindleError } from "../../lib/errors.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";

const KIND_CONTAINERD_CONFIG = [
  "version = 2",
  '[plugins."io.containerd.grpc.v1.cri"]',
  '  sandbox_image = "registry.k8s.io/pause:3.10"',
  "  restrict_oom_score_adj = false",
  "",
].join("\n");

describe("offline kind node image", function () {
  it("names every image exactly as kubeadm v1.34.4 lists them", function () {
    const refs = imageRefs();
    // `kubeadm config images list --kubernetes-version v1.34.4`
    expect([
      refs.apiserver,
      refs.controllerManager,
      refs.scheduler,
      refs.proxy,
      refs.coredns,
      refs.pause,
      refs.etcd,
    ]).to.deep.equal([
      "registry.k8s.io/kube-apiserver:v1.34.4",
      "registry.k8s.io/kube-controller-manager:v1.34.4",
      "registry.k8s.io/kube-scheduler:v1.34.4",
      "registry.k8s.io/kube-proxy:v1.34.4",
      "registry.k8s.io/coredns/coredns:v1.12.1",
      "registry.k8s.io/pause:3.10.1",
      "registry.k8s.io/etcd:3.6.5-0",
    ]);
  });

  it("the manifests it carries name only images it preloads", function () {
    const refs = Object.values(imageRefs());
    for (const file of ["default-cni.yaml", "default-storage.yaml"]) {
      const text = readFileSync(join(PROJECT_ROOT, "deploy", "kind", "manifests", file), "utf8");
      const images = [...text.matchAll(/^\s*(?:- )?image: (\S+)/gm)].map((m) => m[1] ?? "");
      expect(images, file).not.to.be.empty;
      for (const image of images) expect(refs, `${file}: ${image}`).to.include(image);
      expect(text, file).not.to.match(/imagePullPolicy: (Always|IfNotPresent)/);
    }
  });

  it("tags the image with the Kubernetes version and a stable recipe hash that follows the versions", function () {
    expect(nodeImageTag()).to.match(/^rekindle\/node:v1\.34\.4-[0-9a-f]{10}$/);
    expect(recipeHash()).to.equal(recipeHash());
    expect(recipeHash({ ...NODE_IMAGE_VERSIONS, coredns: "v1.12.2" })).not.to.equal(recipeHash());
  });

  it("hashes its parts by content and their path inside deploy/kind, not where the checkout keeps them", function () {
    const copy = join(mkdtempSync(join(tmpdir(), "node-image-parts-")), "elsewhere", "kind");
    cpSync(NODE_IMAGE_PARTS, copy, { recursive: true });
    expect(recipeHash(NODE_IMAGE_VERSIONS, copy)).to.equal(recipeHash());
    appendFileSync(join(copy, "manifests", "default-cni.yaml"), "# changed\n");
    expect(recipeHash(NODE_IMAGE_VERSIONS, copy)).not.to.equal(recipeHash());
  });

  it("patches kind's containerd config for sandboxes and kubeadm's pause", function () {
    const patched = nodeContainerdConfig(KIND_CONTAINERD_CONFIG, "registry.k8s.io/pause:3.10.1");
    expect(patched).to.include("restrict_oom_score_adj = true");
    expect(patched).to.include('sandbox_image = "registry.k8s.io/pause:3.10.1"');
    expect(patched).not.to.include('pause:3.10"');
  });

  it("refuses a containerd config it cannot patch, saying what changed", function () {
    expect(() => nodeContainerdConfig("version = 2\n", "registry.k8s.io/pause:3.10.1"))
      .to.throw(RekindleError)
      .with.property("message")
      .that.includes("restrict_oom_score_adj or sandbox_image");
  });

  it("accepts auto, kindest, rekindle and image references for --image; refuses other words", function () {
    for (const ok of ["auto", "kindest", "rekindle", "kindest/node:v1.34.0", "localhost:5000/node"]) {
      expect(() => {
        checkNodeImageChoice(ok);
      }, ok).not.to.throw();
    }
    expect(() => {
      checkNodeImageChoice("latest");
    })
      .to.throw(RekindleError)
      .with.property(
        "message",
        'unknown --image "latest"; valid: auto, kindest, rekindle, <image reference>',
      );
    expect(defaultNodeImageChoice({})).to.equal("auto");
    expect(defaultNodeImageChoice({ REKINDLE_KIND_IMAGE: "rekindle" })).to.equal("rekindle");
  });

  it("passes --image to kind create only when one was chosen", function () {
    expect(kindArgs.createCluster("rk", "c.yaml", "kc", "5m")).not.to.include("--image");
    expect(kindArgs.createCluster("rk", "c.yaml", "kc", "5m", "rekindle/node:v1").slice(-2)).to.deep.equal([
      "--image",
      "rekindle/node:v1",
    ]);
  });
});
