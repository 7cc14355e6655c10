// The docker fence driver against a real Docker Engine (Debian's docker.io, found or started by
// `npm test`; skipped with the reason where none answers, failed on CI),
// on stand-in node containers named and labelled the way kind names and labels its nodes.
import { expect } from "chai";
import { DockerFenceDriver } from "../../lib/cluster/kind/fence-driver.js";
import { RekindleError } from "../../lib/errors.js";
import { removeStandInNodes, startStandInNodes } from "../support/docker.js";
import { dockerMissing, requirePrerequisite } from "../support/prerequisites.js";

const CLUSTER = "rekindle-it-docker";

describe("docker fence driver (real Docker Engine, stand-in kind nodes)", function () {
  let started = false;

  before(async function () {
    requirePrerequisite(this, await dockerMissing());
    started = true;
    await removeStandInNodes(CLUSTER);
    await startStandInNodes(CLUSTER, 2);
  });

  after(async function () {
    if (started) await removeStandInNodes(CLUSTER);
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

  it("hears a node's container die: the notice names that node, not its peer nor another cluster's", async function () {
    const driver = new DockerFenceDriver();
    const target = (node: string, cluster = CLUSTER) => ({ node, options: { cluster }, credentials: {} });
    const worker2 = target(`${CLUSTER}-worker2`);
    const candidates = [worker2, target(`${CLUSTER}-worker`), target(`${CLUSTER}-worker2`, "another")];
    const stopped = new AbortController();
    const notices: string[][] = [];
    driver.watchPowerLoss(
      (isAbout) =>
        notices.push(candidates.filter((t) => isAbout(t)).map((t) => `${t.options.cluster}/${t.node}`)),
      { signal: stopped.signal, log: () => undefined },
    );
    try {
      // The events stream is open once the engine answers; a stop before that would be missed.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await driver.powerOff(worker2);
      for (let i = 0; i < 100 && notices.length === 0; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(notices).to.deep.equal([[`${CLUSTER}/${CLUSTER}-worker2`]]);
    } finally {
      stopped.abort();
      await driver.powerOn(worker2);
    }
  });

  it("names the node and cluster when no container matches", async function () {
    const error = await new DockerFenceDriver()
      .powerOff({ node: "nope", options: { cluster: CLUSTER }, credentials: {} })
      .catch((e: unknown) => e);
    expect(error).to.be.instanceOf(RekindleError);
    expect((error as Error).message).to.equal(`no container "nope" in kind cluster ${CLUSTER} for node nope`);
  });
});
