// The sim fence driver's power reads (lib/cluster/sim/fence-driver.ts): from the state file as it
// is now, re-read only when the file changed (a zone's worth of early reads at 1000 nodes must
// not parse it each), and a cluster that is gone named as such.
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SimFenceDriver } from "../../lib/cluster/sim/fence-driver.js";
import { writeSimState, type SimClusterState } from "../../lib/cluster/sim/state.js";
import { RekindleError } from "../../lib/errors.js";
import { simStateAt } from "../support/sim-state.js";

/** One shared kwok (this test's own process, so it runs) playing worker-1 and worker-2. */
function stateAt(root: string, power: Record<string, "running" | "stopped">): SimClusterState {
  const group = "kwok-zone-a";
  const node = (name: string) => ({
    name,
    zone: "zone-a",
    group,
    process: undefined,
    power: power[name] ?? "running",
  });
  const kwok = { name: group, command: "kwok", args: [], logPath: join(root, "kwok.log") };
  return simStateAt(
    root,
    [node("worker-1"), node("worker-2")],
    [
      {
        name: group,
        zone: "zone-a",
        kwok,
        process: { ...kwok, pid: process.pid, startTicks: 0, startedAt: new Date(0).toISOString() },
      },
    ],
  );
}

describe("sim fence driver: power reads", function () {
  let root = "";
  beforeEach(function () {
    root = mkdtempSync(join(tmpdir(), "rekindle-driver-"));
  });
  afterEach(function () {
    rmSync(root, { recursive: true, force: true });
  });

  const read = (driver: SimFenceDriver, node: string) =>
    driver.powerState({ node, options: {}, credentials: {} });

  it("follow every change of the state file, reads in between answering from the last parse", async function () {
    const stateFile = join(root, "state.json");
    writeSimState(stateFile, stateAt(root, {}));
    const driver = new SimFenceDriver(root);
    expect(await read(driver, "worker-2")).to.equal("on");
    // Stopped by another process (the harness): same size, a new file.
    writeSimState(stateFile, stateAt(root, { "worker-2": "stopped" }));
    expect(await read(driver, "worker-2")).to.equal("off");
    expect(await read(driver, "worker-1")).to.equal("on");
    writeSimState(stateFile, stateAt(root, {}));
    expect(await read(driver, "worker-2")).to.equal("on");
    expect(await read(driver, "worker-9")).to.equal("unknown");
  });

  it("a cluster whose state is gone is an error naming it", async function () {
    const driver = new SimFenceDriver(root);
    try {
      await read(driver, "worker-1");
      expect.fail("read a cluster that is not there");
    } catch (error) {
      expect(error).to.be.instanceOf(RekindleError);
      expect((error as RekindleError).message).to.include(root);
    }
  });
});
