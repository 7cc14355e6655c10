// The Redfish front (lib/cluster/redfish-front.ts) between the controller's redfish driver and a real
// sushy-tools emulator: with the lie on, the driver reads "off" while the emulator's system is on,
// and a power-off leaves it on; with it off, both behave as the emulator does.
import { expect } from "chai";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRedfishFront, type RedfishFront } from "../../lib/cluster/redfish-front.js";
import { RedfishFenceDriver } from "../../lib/controller/drivers/redfish.js";
import type { FenceTarget, PowerState } from "../../lib/controller/drivers/types.js";
import { pollUntil } from "../../lib/util/time.js";
import { requirePrerequisite } from "../support/prerequisites.js";
import {
  startRedfishEmulator,
  sushyEmulatorMissing,
  type RedfishEmulator,
} from "../support/redfish-emulator.js";
import { selfSignedLoopbackCertificate } from "../support/tls.js";

/** The emulator applies power changes 1–11 s later, like real hardware. */
const SETTLE_MS = 15_000;

describe("Redfish front: a lying BMC before a real Redfish emulator (sushy-tools)", function () {
  this.timeout(300_000);
  let bmc: RedfishEmulator;
  let front: RedfishFront;
  let dir = "";
  let started = false;
  const driver = new RedfishFenceDriver();

  before(async function () {
    requirePrerequisite(this, await sushyEmulatorMissing());
    bmc = await startRedfishEmulator(["worker-1"]);
    started = true;
    dir = mkdtempSync(join(tmpdir(), "rekindle-redfish-front-"));
    const paths = await selfSignedLoopbackCertificate(dir);
    front = await startRedfishFront({
      upstream: bmc.url,
      upstreamInsecure: true,
      tls: { key: readFileSync(paths.key, "utf8"), cert: readFileSync(paths.cert, "utf8") },
    });
  });

  after(async function () {
    await front.close();
    if (started) await bmc.stop();
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  const through = (url: string): FenceTarget => ({
    node: "worker-1",
    options: { url, insecure: "true" },
    credentials: { username: bmc.username, password: bmc.password },
  });
  const truth = () => driver.powerState(through(bmc.url));
  const told = () => driver.powerState(through(front.url));
  const waitTruth = (state: PowerState) =>
    pollUntil(async () => ((await truth()) === state ? true : undefined), {
      what: `worker-1 ${state} at the emulator`,
      timeoutMs: 30_000,
      intervalMs: 500,
    });

  it("truthful, it forwards reads, power-off and power-on to the emulator", async function () {
    expect(await told()).to.equal("on");
    await driver.powerOff(through(front.url));
    await waitTruth("off");
    expect(await told()).to.equal("off");
    await driver.powerOn(through(front.url));
    await waitTruth("on");
    expect(await told()).to.equal("on");
  });

  it("lying, power reads answer off while the system is on, until the lie is cleared", async function () {
    front.lies.set("worker-1", { powerReadsOff: true });
    expect(await told(), "the front lies").to.equal("off");
    expect(await truth(), "the emulator's system runs").to.equal("on");
    front.lies.clear("worker-1");
    expect(await told()).to.equal("on");
  });

  it("lying, a power-off is acknowledged and the system stays on; the caller's credentials still count", async function () {
    front.lies.set("worker-1", { powerOffNoop: true });
    await driver.powerOff(through(front.url));
    // What a real power-off takes to show at the emulator, and then some: still on.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    expect(await truth(), "nothing was done").to.equal("on");
    expect(await told(), "reads tell the truth").to.equal("on");
    const refused = await driver
      .powerOff({ ...through(front.url), credentials: { username: bmc.username, password: "nope" } })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect((refused as Error | undefined)?.message).to.include("answered 401");
    front.lies.clear("worker-1");
    await driver.powerOff(through(front.url));
    await waitTruth("off");
    await driver.powerOn(through(bmc.url));
    await waitTruth("on");
  });
});
