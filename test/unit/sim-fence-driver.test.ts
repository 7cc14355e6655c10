// The sim fence driver (lib/cluster/sim/fence-driver.ts): power reads from the state file as it is
// now, re-read only when the file changed (a zone's worth of early reads at 1000 nodes must not
// parse it each), a cluster that is gone named as such; power-loss notices, after the engine's
// delay; a frozen node's longer power-off; a lying BMC (power reads "off", a power-off that does
// nothing), set and cleared while the driver is in use.
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BmcLies } from "../../lib/cluster/bmc-lies.js";
import { SIM_POWER_LOSS_NOTICE_MS, SimFenceDriver } from "../../lib/cluster/sim/fence-driver.js";
import type { FenceTarget } from "../../lib/controller/drivers/types.js";
import { readSimState, writeSimState, type SimClusterState } from "../../lib/cluster/sim/boot/state.js";
import { RekindleError } from "../../lib/errors.js";
import { simStateAt } from "../support/sim-state.js";

/** One shared kwok (this test's own process, so it runs) playing worker-1 and worker-2. */
function stateAt(
  root: string,
  power: Record<string, "running" | "stopped" | "partitioned">,
): SimClusterState {
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

describe("sim fence driver: power reads, notices and power-off", function () {
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

  it("hears of power losses: each write that stops nodes is one notice naming them", async function () {
    const stateFile = join(root, "state.json");
    writeSimState(stateFile, stateAt(root, {}));
    const driver = new SimFenceDriver(root);
    const stopped = new AbortController();
    const notices: string[][] = [];
    const targets = ["worker-1", "worker-2"].map((node): FenceTarget => ({
      node,
      options: {},
      credentials: {},
    }));
    driver.watchPowerLoss((isAbout) => notices.push(targets.filter((t) => isAbout(t)).map((t) => t.node)), {
      signal: stopped.signal,
      log: () => undefined,
    });
    try {
      // The watch takes the state as it is when it starts: nothing stopped, no notice.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stoppedAt = Date.now();
      writeSimState(stateFile, stateAt(root, { "worker-2": "stopped" }));
      await waitFor(() => notices.length > 0);
      expect(notices).to.deep.equal([["worker-2"]]);
      expect(Date.now() - stoppedAt, "a notice takes a power event's time").to.be.at.least(
        SIM_POWER_LOSS_NOTICE_MS,
      );
      // A start is no loss; stopping both then names the one that was running.
      writeSimState(stateFile, stateAt(root, { "worker-2": "stopped", "worker-1": "stopped" }));
      await waitFor(() => notices.length > 1);
      expect(notices).to.deep.equal([["worker-2"], ["worker-1"]]);
    } finally {
      stopped.abort();
    }
  });

  it("waits before powering off a partitioned (frozen) node: aborted while it waits, it stops nothing", async function () {
    const stateFile = join(root, "state.json");
    writeSimState(stateFile, stateAt(root, { "worker-1": "partitioned" }));
    const driver = new SimFenceDriver(root, { frozenPowerOffMs: 300 });
    const target = (node: string): FenceTarget => ({ node, options: {}, credentials: {} });
    const aborted = AbortSignal.abort();
    let refused: unknown;
    await driver.powerOff(target("worker-1"), aborted).catch((error: unknown) => {
      refused = error;
    });
    expect((refused as Error | undefined)?.name, "aborted while it waited for the frozen node").to.equal(
      "AbortError",
    );
    expect(readSimState(stateFile).nodes.find((n) => n.name === "worker-1")?.power).to.equal("partitioned");
  });

  it("a BMC that lies about power reads answers off for its node alone, until the lie is cleared", async function () {
    writeSimState(join(root, "state.json"), stateAt(root, {}));
    const lies = new BmcLies();
    const driver = new SimFenceDriver(root, { lies });
    expect(await read(driver, "worker-1")).to.equal("on");
    lies.set("worker-1", { powerReadsOff: true });
    expect(await read(driver, "worker-1"), "the machine runs, its BMC says off").to.equal("off");
    expect(await read(driver, "worker-2"), "another node's BMC tells the truth").to.equal("on");
    // A node the cluster does not have is still "off" to a BMC that lies.
    lies.set("worker-9", { powerReadsOff: true });
    expect(await read(driver, "worker-9")).to.equal("off");
    lies.clear("worker-1");
    lies.set("worker-9", { powerReadsOff: false });
    expect(await read(driver, "worker-1")).to.equal("on");
    expect(await read(driver, "worker-9")).to.equal("unknown");
    expect(lies.lying()).to.deep.equal([]);
  });

  it("a BMC whose power-off is a no-op acknowledges it and leaves the node as it was", async function () {
    const stateFile = join(root, "state.json");
    writeSimState(stateFile, stateAt(root, { "worker-1": "partitioned" }));
    const lies = new BmcLies();
    const driver = new SimFenceDriver(root, { lies, frozenPowerOffMs: 300 });
    const target: FenceTarget = { node: "worker-1", options: {}, credentials: {} };
    // Truthful, the power-off goes for the node: it waits for the frozen node and is aborted there.
    const truthful = await driver.powerOff(target, AbortSignal.abort()).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((truthful as Error | undefined)?.name).to.equal("AbortError");
    lies.set("worker-1", { powerOffNoop: true });
    // Lying, it is done at once (the same aborted signal is never looked at), and nothing changed.
    await driver.powerOff(target, AbortSignal.abort());
    expect(readSimState(stateFile).nodes.find((n) => n.name === "worker-1")?.power).to.equal("partitioned");
    expect(await read(driver, "worker-1"), "its power reads tell the truth").to.equal("on");
    // Both lies together: the state a fence waits for, with nothing done.
    lies.set("worker-1", { powerOffNoop: true, powerReadsOff: true });
    await driver.powerOff(target);
    expect(await read(driver, "worker-1")).to.equal("off");
    expect(readSimState(stateFile).nodes.find((n) => n.name === "worker-1")?.power).to.equal("partitioned");
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i += 1) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(condition(), "waited 2 s").to.equal(true);
}
