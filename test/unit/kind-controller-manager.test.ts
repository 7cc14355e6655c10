import { expect } from "chai";
import { parse } from "yaml";
import { withExtraFlags } from "../../lib/cluster/kind/controller-manager.js";
import { RekindleError } from "../../lib/errors.js";

// The shape kubeadm writes to /etc/kubernetes/manifests/kube-controller-manager.yaml on kind nodes.
const KUBEADM_MANIFEST = `apiVersion: v1
kind: Pod
metadata:
  labels:
    component: kube-controller-manager
    tier: control-plane
  name: kube-controller-manager
  namespace: kube-system
spec:
  containers:
  - command:
    - kube-controller-manager
    - --allocate-node-cidrs=true
    - --leader-elect=true
    image: registry.k8s.io/kube-controller-manager:v1.34.4
    name: kube-controller-manager
  hostNetwork: true
`;

interface Manifest {
  spec: { containers: { command: string[]; image: string }[] };
}

describe("kind kube-controller-manager manifest", function () {
  it("appends the extra flags to the container's command and keeps everything else", function () {
    const out = parse(
      withExtraFlags(KUBEADM_MANIFEST, ["--disable-force-detach-on-timeout=true"]),
    ) as Manifest;
    const before = parse(KUBEADM_MANIFEST) as Manifest;
    expect(out.spec.containers[0]?.command).to.deep.equal([
      "kube-controller-manager",
      "--allocate-node-cidrs=true",
      "--leader-elect=true",
      "--disable-force-detach-on-timeout=true",
    ]);
    expect({ ...out, spec: { ...out.spec, containers: [] } }).to.deep.equal({
      ...before,
      spec: { ...before.spec, containers: [] },
    });
    expect(out.spec.containers[0]?.image).to.equal("registry.k8s.io/kube-controller-manager:v1.34.4");
  });

  it("refuses a manifest without a command list, naming the file", function () {
    let caught: unknown;
    try {
      withExtraFlags("apiVersion: v1\nkind: Pod\nspec: {}\n", ["--x"]);
    } catch (error) {
      caught = error;
    }
    expect(caught).to.be.instanceOf(RekindleError);
    expect((caught as RekindleError).message).to.include(
      "/etc/kubernetes/manifests/kube-controller-manager.yaml",
    );
  });
});
