import { expect } from "chai";
import {
  etcdWrapperGoMod,
  kubernetesWrapperGoMod,
  kwokWrapperGoMod,
  stagingModulesFromGoMod,
} from "../../lib/build/sim-binaries.js";
import { PINNED_SIM_VERSIONS, stagingVersionFor } from "../../lib/build/versions.js";
import { expectIncludes } from "../support/assertions.js";

const K8S_GO_MOD_EXCERPT = `module k8s.io/kubernetes

go 1.24.0

godebug default=go1.24

require (
	k8s.io/api v0.0.0
	github.com/spf13/cobra v1.9.1
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go => ./staging/src/k8s.io/client-go
	k8s.io/kube-scheduler => ./staging/src/k8s.io/kube-scheduler
)
`;

describe("sim build plan", function () {
  it("pins Kubernetes 1.34, etcd 3.6 and a KWOK release", function () {
    expect(PINNED_SIM_VERSIONS.kubernetes).to.match(/^v1\.34\.\d+$/);
    expect(PINNED_SIM_VERSIONS.etcd).to.match(/^v3\.6\.\d+$/);
    expect(PINNED_SIM_VERSIONS.kwok).to.match(/^v0\.\d+\.\d+$/);
  });

  it("maps a Kubernetes tag to its staging tag", function () {
    expect(stagingVersionFor("v1.34.4")).to.equal("v0.34.4");
    expect(() => stagingVersionFor("v1.34.4-rc.1")).to.throw(/not a Kubernetes release tag/);
  });

  it("reads the staging modules from k8s.io/kubernetes' replace block", function () {
    expect(stagingModulesFromGoMod(K8S_GO_MOD_EXCERPT)).to.deep.equal([
      "k8s.io/api",
      "k8s.io/client-go",
      "k8s.io/kube-scheduler",
    ]);
  });

  it("writes a wrapper go.mod that replaces every staging module with its tag and carries godebug", function () {
    const goMod = kubernetesWrapperGoMod("v1.34.4", ["k8s.io/api", "k8s.io/client-go"]);
    expectIncludes(goMod, [
      "require k8s.io/kubernetes v1.34.4",
      "\tk8s.io/api => k8s.io/api v0.34.4",
      "\tk8s.io/client-go => k8s.io/client-go v0.34.4",
      "godebug default=go1.24",
      "\tk8s.io/kubernetes/cmd/kube-apiserver",
      "\tk8s.io/kubernetes/cmd/kubectl",
    ]);
  });

  it("pins etcd's sibling modules to the same tag", function () {
    const goMod = etcdWrapperGoMod("v3.6.16");
    for (const sibling of ["api/v3", "client/pkg/v3", "client/v3", "pkg/v3"]) {
      expect(goMod).to.include(`go.etcd.io/etcd/${sibling} => go.etcd.io/etcd/${sibling} v3.6.16`);
    }
  });

  it("builds kwok from its own module with no replaces", function () {
    const goMod = kwokWrapperGoMod("v0.8.0");
    expect(goMod).to.include("require sigs.k8s.io/kwok v0.8.0");
    expect(goMod).to.not.include("replace");
  });
});
