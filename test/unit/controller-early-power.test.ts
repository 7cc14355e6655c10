// The early power read (issue 25, item 7): a node that missed a renewal and whose driver reads it
// off is lost at once; one read on is left to the normal path. Fake clock and a scripted driver.
import { expect } from "chai";
import { assessNode } from "../../lib/controller/detect.js";
import { earlyReadCandidates } from "../../lib/controller/early-power.js";
import { fleetDecision, fleetView } from "../../lib/controller/fleet.js";
import { FenceRateLimiter } from "../../lib/controller/fence-rate.js";
import { controllerSettings, parseControllerFlags } from "../../lib/controller/flags.js";
import { DEFAULT_CONTROLLER_CONFIG } from "../../lib/controller/config.js";
import { missedRenewalAfterMs } from "../../lib/controller/observations.js";
import { assessNodes, guardNodes, planNode } from "../../lib/controller/plan.js";
import {
  CHECK_MS,
  UNHEALTHY_AFTER_MS,
  cluster,
  earlyReads,
  s,
  scriptedReads,
  wakeUps,
} from "../support/early-power.js";
import { snapshotAt, type ScriptedNode } from "../support/node-history.js";

describe("controller: early power read", function () {
  it("a missed renewal is the renewal interval plus the kubelet's jitter or two checks", function () {
    expect(missedRenewalAfterMs(10_000, 500)).to.equal(11_000);
    expect(missedRenewalAfterMs(10_000, 1_000)).to.equal(12_000);
    expect(missedRenewalAfterMs(2_000, 500)).to.equal(3_000);
  });

  it("reads a node once per missed renewal, and one read off makes it lost at once", async function () {
    // a renewed last at 50 s (stopped at 55 s): at 62 s it has missed one renewal, not unhealthyAfter.
    let now = s(62);
    const { o } = cluster({ a: s(55) }, now);
    const driver = scriptedReads({ a: "off" });
    const early = earlyReads(o, {
      read: driver.read,
      now: () => now,
    });
    expect(early.missedRenewals("a", now)).to.equal(1);
    expect(early.missedRenewals("b", now)).to.equal(0);
    expect(assessNode(o.get("a"), now, UNHEALTHY_AFTER_MS).state, "before the read").to.not.equal(
      "unhealthy",
    );
    early.launch(["a", "b", "c"]);
    early.launch(["a", "b", "c"]);
    await early.settle();
    expect(driver.reads).to.deep.equal(["a"]);
    const health = assessNode(o.get("a"), now, UNHEALTHY_AFTER_MS);
    expect(health).to.deep.equal({
      state: "unhealthy",
      reason: "Lease not renewed for 12s and scripted reports its power off",
      poweredOff: true,
    });
    // The next missed renewal would read again, but a node known off is not read again.
    now = s(72);
    early.launch(["a"]);
    await early.settle();
    expect(driver.reads).to.deep.equal(["a"]);
  });

  it("a node read on keeps the normal path, and is read again at its next missed renewal", async function () {
    let now = s(62);
    const { o } = cluster({ a: s(55) }, now);
    const driver = scriptedReads({});
    const early = earlyReads(o, {
      unhealthyAfterMs: 30_000,
      read: driver.read,
      now: () => now,
    });
    early.launch(["a"]);
    await early.settle();
    expect(assessNode(o.get("a"), s(62), 30_000).state).to.not.equal("unhealthy");
    now = s(70);
    early.launch(["a"]);
    await early.settle();
    expect(driver.reads, "the same missed renewal").to.deep.equal(["a"]);
    now = s(72);
    early.launch(["a"]);
    await early.settle();
    expect(driver.reads, "the second missed renewal").to.deep.equal(["a", "a"]);
  });

  it("evidence ends with a renewal: a node that renews after the read is not lost", async function () {
    const { o } = cluster({ a: s(55) }, s(62));
    const early = earlyReads(o, {
      read: scriptedReads({ a: "off" }).read,
      now: () => s(62),
    });
    early.launch(["a"]);
    await early.settle();
    // Powered back on: it renews at 63 s.
    const nodes: ScriptedNode[] = [
      { name: "a", zone: "z", alive: (t) => t < s(55) || t >= s(63), phaseMs: 3_000 },
    ];
    o.record(snapshotAt(nodes, s(63), s(0)), s(63));
    expect(assessNode(o.get("a"), s(63), UNHEALTHY_AFTER_MS).state).to.not.equal("unhealthy");
  });

  it("reads at most maxConcurrent nodes at once, the next as soon as one ends", async function () {
    // Silent since 50, 53 and 46 s: at 66 s each has missed a renewal.
    const now = s(66);
    const { o } = cluster({ a: s(55), b: s(55), c: s(55) }, now);
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const reads: string[] = [];
    const early = earlyReads(o, {
      unhealthyAfterMs: 30_000,
      maxConcurrent: 2,
      read: async (node) => {
        reads.push(node);
        await gate;
        return { state: "on", driver: "scripted" };
      },
      now: () => now,
    });
    early.launch(["a", "b", "c"]);
    expect(reads).to.deep.equal(["a", "b"]);
    release();
    await early.settle();
    expect(reads, "c read without another launch").to.deep.equal(["a", "b", "c"]);
    early.stop();
    early.launch(["a", "b", "c"]);
    expect(reads, "none after stop").to.have.length(3);
  });

  it("a candidate that misses its renewal between passes is read then, not at the next pass", async function () {
    // a renewed last at 50 s: its renewal is missed at 62 s (interval + two checks); b at 65 s.
    let now = s(58);
    const { o } = cluster({ a: s(55), b: s(55) }, now);
    const driver = scriptedReads({ a: "off" });
    const wake = wakeUps();
    const early = earlyReads(o, { read: driver.read, now: () => now, schedule: wake.schedule });
    early.launch(["a", "b", "c"]);
    expect(driver.reads, "none due at launch").to.deep.equal([]);
    expect(wake.delays(), "woken at a's due time").to.deep.equal([4_000]);
    now = s(62);
    wake.fire();
    await early.settle();
    expect(driver.reads).to.deep.equal(["a"]);
    expect(assessNode(o.get("a"), now, UNHEALTHY_AFTER_MS).state).to.equal("unhealthy");
    expect(wake.delays(), "then at b's").to.deep.equal([3_000]);
    now = s(64_990 / 1000);
    wake.fire();
    expect(wake.delays(), "never more than four wake-ups a check interval").to.deep.equal([CHECK_MS / 4]);
    early.stop();
    expect(wake.delays(), "stop cancels the wake-up").to.deep.equal([]);
  });

  it("a candidate that cannot be read now is read later; one whose Lease was renewed since the pass is not read", async function () {
    let now = s(62);
    const { o } = cluster({ a: s(55) }, now);
    const driver = scriptedReads({});
    const seen = o.get("a")?.renewTime;
    let current: () => Promise<{ renewTime: string | undefined }> = () =>
      Promise.reject(new Error("blind: the Lease watch is stale"));
    const early = earlyReads(o, {
      unhealthyAfterMs: 30_000,
      read: driver.read,
      now: () => now,
      current: () => current(),
    });
    early.launch(["a"]);
    await early.settle();
    expect(driver.reads, "its state unreadable").to.deep.equal([]);
    current = () => Promise.resolve({ renewTime: "2026-01-01T00:01:01.000000Z" });
    early.launch(["a"]);
    await early.settle();
    expect(driver.reads, "renewed meanwhile").to.deep.equal([]);
    // The pass did not see that renewal (the test's observations stay): at the next missed one it is read.
    current = () => Promise.resolve({ renewTime: seen });
    now = s(72);
    early.launch(["a"]);
    await early.settle();
    expect(driver.reads, "still silent").to.deep.equal(["a"]);
  });

  it("no early read when unhealthyAfter comes before a missed renewal would", function () {
    const { o } = cluster({ a: s(55) }, s(62));
    const early = earlyReads(o, {
      unhealthyAfterMs: 11_000,
      read: scriptedReads({}).read,
      now: () => s(62),
    });
    expect(early.missedRenewals("a", s(62))).to.equal(0);
  });

  it("a node read off skips the wait for its peers and the correlated-silence hold, not the guard", async function () {
    // a and b stopped together at 55 s; a is read off at 62 s, b not yet read.
    const now = s(62);
    const { o, snapshot } = cluster({ a: s(55), b: s(55) }, now);
    const early = earlyReads(o, {
      read: scriptedReads({ a: "off" }).read,
      now: () => now,
    });
    early.launch(["a"]);
    await early.settle();
    const health = assessNodes(snapshot, o, now, UNHEALTHY_AFTER_MS);
    const guard = guardNodes(snapshot, health, "rekindle.dev/exclude");
    const settings = {
      ...DEFAULT_CONTROLLER_CONFIG,
      checkIntervalMs: CHECK_MS,
      unhealthyAfterMs: UNHEALTHY_AFTER_MS,
      maxUnhealthy: "100%",
    };
    const fleet = { view: fleetView(guard, health, o, now, settings), settings };
    const plan = planNode("a", snapshot, o, health, guard, settings, fleet);
    expect(plan).to.deep.include({ kind: "fence", rate: "unmetered" });
    const paused = { ...snapshot, paused: true };
    expect(planNode("a", paused, o, health, guard, settings, fleet)).to.deep.include({
      kind: "hold",
      reason: "Paused",
    });
    const budget = planNode("a", snapshot, o, health, guard, { ...settings, maxUnhealthy: "0" }, fleet);
    expect(budget).to.deep.include({ kind: "hold" });
  });

  it("a fully disrupted fleet still holds a node read off", function () {
    const view = {
      zones: new Map(),
      allDisrupted: true,
      nodes: new Map(),
      nowMs: 0,
    };
    const decision = fleetDecision("a", view, { ...DEFAULT_CONTROLLER_CONFIG }, true);
    expect(decision).to.deep.include({ allowed: false, reason: "AllZonesDisrupted" });
  });

  it("an unmetered fence start takes no token of the fleet-wide rate", function () {
    const rate = new FenceRateLimiter({
      fenceRatePerMinute: 1,
      secondaryFenceRatePerMinute: 1,
      fenceBurst: 1,
    });
    expect(rate.take("unmetered", 0).taken).to.equal(true);
    expect(rate.take("unmetered", 0).taken).to.equal(true);
    expect(rate.take("primary", 0).taken).to.equal(true);
    expect(rate.take("primary", 0).taken).to.equal(false);
  });

  it("reads only nodes the guard would consider, none while paused", function () {
    const node = { zone: "z", controlPlane: false, excluded: false, unhealthy: false, fencing: false };
    const guard = [
      { ...node, name: "ok" },
      { ...node, name: "cp", controlPlane: true },
      { ...node, name: "excluded", excluded: true },
      { ...node, name: "unselected", unselected: true },
      { ...node, name: "fencing", fencing: true },
      { ...node, name: "lost", unhealthy: true },
    ];
    expect(earlyReadCandidates(guard, false)).to.deep.equal(["ok"]);
    expect(earlyReadCandidates(guard, true)).to.deep.equal([]);
  });

  it("is on by default, off with --no-early-power-read", function () {
    expect(DEFAULT_CONTROLLER_CONFIG.earlyPowerRead).to.equal(true);
    const config = (...args: string[]) => controllerSettings(parseControllerFlags(args)).config;
    expect(config().earlyPowerRead).to.equal(true);
    expect(config("--no-early-power-read").earlyPowerRead).to.equal(false);
  });
});
