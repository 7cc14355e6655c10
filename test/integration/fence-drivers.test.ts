// Fence drivers against real counterparts: the sushy-tools Redfish emulator (HTTPS, basic auth)
// for the redfish driver, and Debian's fence_redfish agent, driven by the fence-agent driver,
// against the same emulator.
import { expect } from "chai";
import { FenceAgentDriver } from "../../lib/controller/drivers/fence-agent.js";
import { RedfishFenceDriver } from "../../lib/controller/drivers/redfish.js";
import type { FenceDriver, FenceTarget, PowerState } from "../../lib/controller/drivers/types.js";
import { RekindleError } from "../../lib/errors.js";
import { pollUntil } from "../../lib/util/time.js";
import { fenceAgentMissing, requirePrerequisite } from "../support/prerequisites.js";
import {
  startRedfishEmulator,
  sushyEmulatorMissing,
  type RedfishEmulator,
} from "../support/redfish-emulator.js";

async function waitPower(driver: FenceDriver, target: FenceTarget, state: PowerState): Promise<void> {
  // The emulator applies power changes 1–11 s later, like real hardware.
  await pollUntil(async () => ((await driver.powerState(target)) === state ? true : undefined), {
    what: `${target.node} power ${state} via ${driver.name}`,
    timeoutMs: 30_000,
    intervalMs: 500,
  });
}

describe("fence drivers against a Redfish emulator (sushy-tools)", function () {
  let bmc: RedfishEmulator;
  let started = false;

  before(async function () {
    requirePrerequisite(this, await sushyEmulatorMissing());
    bmc = await startRedfishEmulator(["worker-1", "worker-2"]);
    started = true;
  });

  after(async function () {
    if (started) await bmc.stop();
  });

  const redfishTarget = (node: string, password = bmc.password): FenceTarget => ({
    node,
    options: { url: bmc.url, insecure: "true" },
    credentials: { username: bmc.username, password },
  });

  it("redfish: powers a system off and on over HTTPS, confirming each from PowerState", async function () {
    const driver = new RedfishFenceDriver();
    const target = redfishTarget("worker-1");
    expect(await driver.powerState(target)).to.equal("on");
    await driver.powerOff(target);
    await waitPower(driver, target, "off");
    await driver.powerOn(target);
    await waitPower(driver, target, "on");
  });

  it("redfish: wrong credentials and plain HTTP are refused clearly", async function () {
    const driver = new RedfishFenceDriver();
    const wrong = await driver.powerOff(redfishTarget("worker-1", "nope")).catch((e: unknown) => e);
    expect(wrong).to.be.instanceOf(RekindleError);
    expect((wrong as Error).message).to.include("answered 401");
    const http = await driver
      .powerOff({ ...redfishTarget("worker-1"), options: { url: `http://127.0.0.1:${bmc.port}` } })
      .catch((e: unknown) => e);
    expect((http as Error).message).to.include("needs an https:// url");
  });

  it("fence-agent: fence_redfish with parameters on stdin powers off and reports status", async function () {
    requirePrerequisite(this, fenceAgentMissing("fence_redfish"));
    const driver = new FenceAgentDriver();
    const target: FenceTarget = {
      node: "worker-2",
      options: {
        agent: "fence_redfish",
        ip: "127.0.0.1",
        ipport: String(bmc.port),
        systems_uri: `/redfish/v1/Systems/${bmc.systems["worker-2"] ?? ""}`,
        ssl_insecure: "1",
      },
      credentials: { username: bmc.username, password: bmc.password },
    };
    expect(await driver.powerState(target)).to.equal("on");
    await driver.powerOff(target);
    expect(await driver.powerState(target)).to.equal("off");
    await driver.powerOn(target);
    expect(await driver.powerState(target)).to.equal("on");
  });
});

// Needs no emulator: runs wherever the suite runs.
describe("fence-agent driver without an agent", function () {
  it("refuses a program that is not a fence agent", async function () {
    const error = await new FenceAgentDriver()
      .powerOff({ node: "x", options: { agent: "rm" }, credentials: {} })
      .catch((e: unknown) => e);
    expect((error as Error).message).to.include('unknown fence agent "rm"');
  });
});
