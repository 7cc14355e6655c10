// The docker fence driver against a real Docker Engine (Debian's docker.io, started by .ci/run),
// on stand-in node containers named and labelled the way kind names and labels its nodes.
import { expect } from "chai";
import { DockerFenceDriver } from "../../lib/cluster/kind/fence-driver.js";
import { RekindleError } from "../../lib/errors.js";
import { dockerAvailable, removeStandInNodes, startStandInNodes } from "../support/docker.js";

const CLUSTER = "rekindle-it-docker";

describe("docker fence driver (real Docker Engine, stand-in kind nodes)", function () {
  before(async function () {
    if (!(await dockerAvailable())) {
      throw new Error(
        "no Docker Engine answers: .ci/run installs docker.io and starts dockerd; start it by hand for a local run",
      );
    }
    await removeStandInNodes(CLUSTER);
    await startStandInNodes(CLUSTER, 2);
  });

  after(async function () {
    await removeStandInNodes(CLUSTER);
  });

  it("stops a node's container, confirms it off, and starts it again", async function () {
    const driver = new DockerFenceDriver();
    const target = { node: `${CLUSTER}-worker2`, options: { cluster: CLUSTER }, credentials: {} };
    expect(await driver.powerState(target)).to.equal("on");
    await driver.powerOff(target);
    expect(await driver.powerState(target)).to.equal("off");
    await driver.powerOff(target); // idempotent
    await driver.powerOn(target);
    expect(await driver.powerState(target)).to.equal("on");
    // The other node was never touched.
    expect(await driver.powerState({ ...target, node: `${CLUSTER}-worker` })).to.equal("on");
  });

  it("names the node and cluster when no container matches", async function () {
    const error = await new DockerFenceDriver()
      .powerOff({ node: "nope", options: { cluster: CLUSTER }, credentials: {} })
      .catch((e: unknown) => e);
    expect(error).to.be.instanceOf(RekindleError);
    expect((error as Error).message).to.equal(`no container "nope" in kind cluster ${CLUSTER} for node nope`);
  });
});
