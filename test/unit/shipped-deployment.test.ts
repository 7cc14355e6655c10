import { expect } from "chai";
import { shippedControllerSettings } from "../../lib/controller/shipped-deployment.js";
import { RekindleError } from "../../lib/errors.js";

describe("the shipped controller Deployment's settings", function () {
  it("are read from deploy/controller/deployment.yaml by the controller's own flag parser", function () {
    const shipped = shippedControllerSettings();
    expect(shipped.args).to.include("--leader-elect");
    expect(shipped.leaderElect).to.equal(true);
    expect(shipped.replicas).to.equal(2);
    // The manifest says --unhealthy-after 20s; the rest are the controller's defaults.
    expect(shipped.config.unhealthyAfterMs).to.equal(20_000);
    expect(shipped.config.checkIntervalMs).to.equal(1_000);
    // The V8 flags bench:controller runs the shipped controller with.
    expect(shipped.nodeFlags).to.include.members(["--max-semi-space-size=1", "--optimize-for-size"]);
  });

  it("follow a changed manifest", function () {
    const manifest = `apiVersion: apps/v1
kind: Deployment
metadata: { name: rekindle-controller }
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: controller
          args: [controller, --unhealthy-after, 45s, --check-interval, 2s]
`;
    const shipped = shippedControllerSettings(manifest, "edited.yaml");
    expect(shipped).to.deep.include({ leaderElect: false, replicas: 3, nodeFlags: [] });
    expect(shipped.config.unhealthyAfterMs).to.equal(45_000);
    expect(shipped.config.checkIntervalMs).to.equal(2_000);
  });

  it("refuse a manifest without the controller container, naming the file", function () {
    const manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: { name: x }\n";
    expect(() => shippedControllerSettings(manifest, "edited.yaml"))
      .to.throw(RekindleError, /edited\.yaml: no Deployment rekindle-controller whose container "controller"/)
      .with.property("code", "INVALID_INPUT");
  });

  it("refuse args the controller itself would refuse", function () {
    const manifest = `kind: Deployment
metadata: { name: rekindle-controller }
spec: { template: { spec: { containers: [ { name: controller, args: [controller, --unhealthy-after, 1ms] } ] } } }
`;
    expect(() => shippedControllerSettings(manifest, "edited.yaml")).to.throw(/--unhealthy-after/);
  });
});
