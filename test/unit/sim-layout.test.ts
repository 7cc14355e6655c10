// A sim cluster's files are named by absolute paths even when its root was given relative (a
// relative --report-dir holds the run's cluster): kubeconfigs name their certificates by path, and a
// client resolves a relative one from the kubeconfig's directory, which doubled the path
// (kube-scheduler exited at boot: "unable to read certificate-authority reports/x/cluster/pki/reports/x/…").
import { expect } from "chai";
import { isAbsolute, join } from "node:path";
import { simLayout } from "../../lib/cluster/sim/boot/layout.js";

describe("sim layout", function () {
  it("makes every path absolute, resolved from the current directory", function () {
    const layout = simLayout("reports/cal-sim/cluster");
    expect(layout.root).to.equal(join(process.cwd(), "reports/cal-sim/cluster"));
    for (const path of [
      layout.stateFile,
      layout.kubeconfig,
      layout.pkiDir,
      layout.apiserverCertificate,
      layout.componentKubeconfig("kube-scheduler"),
    ]) {
      expect(isAbsolute(path), path).to.equal(true);
      expect(path.startsWith(layout.root), path).to.equal(true);
    }
  });

  it("keeps an absolute root as it is", function () {
    expect(simLayout("/tmp/rekindle-x").kubeconfig).to.equal("/tmp/rekindle-x/kubeconfig");
  });
});
