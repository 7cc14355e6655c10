// No mass power-off: zone states, the fleet-wide fence rate, the hold of nodes silent together, and
// the path of a node lost alone (unchanged), on a fake clock.
import { expect } from "chai";
import { DEFAULT_CONTROLLER_CONFIG } from "../../lib/controller/config.js";
import { FenceRateLimiter, TokenBucket } from "../../lib/controller/fence-rate.js";
import { fleetSettingsFrom, validateFleetConfig } from "../../lib/controller/fleet-config.js";
import { fleetDecision, fleetView, type FleetSettings } from "../../lib/controller/fleet.js";
import { assessNodes, guardNodes, planNode } from "../../lib/controller/plan.js";
import type { Snapshot } from "../../lib/controller/snapshot.js";
import { allZonesDisrupted, zoneState, zoneStates } from "../../lib/controller/zones.js";
import { RekindleError } from "../../lib/errors.js";
import { observations, replay, snapshotAt, type ScriptedNode } from "../support/node-history.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const s = (seconds: number) => T0 + seconds * 1000;

describe("controller: zone states (reference 003)", function () {
  it("FullDisruption with no node ready, PartialDisruption from 3 nodes and the threshold, else Normal", function () {
    expect(zoneState(1, 1, 0.55)).to.equal("FullDisruption");
    expect(zoneState(2, 2, 0.55)).to.equal("FullDisruption");
    expect(zoneState(2, 3, 0.55), "2 not ready is never partial").to.equal("Normal");
    expect(zoneState(3, 5, 0.55)).to.equal("PartialDisruption");
    expect(zoneState(3, 6, 0.55), "50 % < 55 %").to.equal("Normal");
    expect(zoneState(0, 4, 0.55)).to.equal("Normal");
  });

  it("all zones disrupted only with every zone down and more than one node not ready", function () {
    const two = zoneStates(
      [
        { zone: "a", notReady: true },
        { zone: "b", notReady: true },
      ],
      0.55,
    );
    expect(allZonesDisrupted(two)).to.equal(true);
    const oneWorker = zoneStates([{ zone: "a", notReady: true }], 0.55);
    expect(allZonesDisrupted(oneWorker), "a single worker lost is a node lost alone").to.equal(false);
    const oneZoneUp = zoneStates(
      [
        { zone: "a", notReady: true },
        { zone: "a", notReady: true },
        { zone: "b", notReady: false },
      ],
      0.55,
    );
    expect(allZonesDisrupted(oneZoneUp)).to.equal(false);
  });
});

describe("controller: fleet-wide fence rate", function () {
  it("a bucket starts full, refills at its rate per minute, never beyond its burst", function () {
    const bucket = new TokenBucket(6, 1);
    expect(bucket.take(s(0))).to.equal(true);
    expect(bucket.take(s(0))).to.equal(false);
    expect(bucket.waitMs(s(4))).to.equal(6_000);
    expect(bucket.take(s(10))).to.equal(true);
    // An hour idle saves up one start, not 360.
    expect(bucket.take(s(3_610))).to.equal(true);
    expect(bucket.take(s(3_610))).to.equal(false);
  });

  it("a clock read earlier than the last one refills nothing", function () {
    const bucket = new TokenBucket(6, 1);
    expect(bucket.take(s(100))).to.equal(true);
    expect(bucket.take(s(50))).to.equal(false);
    expect(bucket.waitMs(s(105))).to.equal(5_000);
  });

  it("a secondary start takes from both buckets, all or nothing", function () {
    const limiter = new FenceRateLimiter({
      fenceRatePerMinute: 6,
      secondaryFenceRatePerMinute: 1,
      fenceBurst: 1,
    });
    expect(limiter.take("secondary", s(0))).to.deep.equal({ taken: true });
    const next = limiter.take("secondary", s(10));
    expect(next.taken).to.equal(false);
    expect(next.taken ? 0 : next.waitMs).to.equal(50_000);
    expect(next.taken ? "" : next.message).to.include("secondary fence rate (1/min)");
    // The primary bucket refilled in 10 s and was not spent by the refused secondary start.
    expect(limiter.take("primary", s(10))).to.deep.equal({ taken: true });
    expect(limiter.take("secondary", s(70))).to.deep.equal({ taken: true });
  });
});

/** Nodes renewing every 10 s (node-history's Lease) with a 1 s check; `stops` ends one's renewals. */
function fleetAt(
  now: number,
  zones: Record<string, string>,
  stops: Record<string, number>,
  settings: Partial<FleetSettings> = {},
) {
  const nodes: ScriptedNode[] = Object.entries(zones).map(([name, zone], i) => ({
    name,
    zone,
    phaseMs: (i * 1_300) % 10_000,
    alive: (t: number) => stops[name] === undefined || t <= (stops[name] ?? 0),
  }));
  const o = observations({ checkIntervalMs: 1_000 });
  replay(o, nodes, { from: s(0), to: now });
  const snapshot: Snapshot = { ...snapshotAt(nodes, now, s(0)), fences: new Map(), paused: false };
  const health = assessNodes(snapshot, o, now, 20_000);
  const guard = guardNodes(snapshot, health, "rekindle.dev/exclude");
  const config: FleetSettings = {
    ...DEFAULT_CONTROLLER_CONFIG,
    checkIntervalMs: 1_000,
    unhealthyAfterMs: 20_000,
    nodeMonitorGracePeriodMs: 50_000,
    ...settings,
  };
  const view = fleetView(guard, health, o, now, config);
  return {
    view,
    config,
    plan: (name: string) =>
      planNode(
        name,
        snapshot,
        o,
        health,
        guard,
        { maxUnhealthy: "100%", checkIntervalMs: 1_000 },
        {
          view,
          settings: config,
        },
      ),
  };
}

const SIX_IN_A = { a1: "a", a2: "a", a3: "a", a4: "a", a5: "a", a6: "a", b1: "b", b2: "b", b3: "b" };

describe("controller: nodes silent together are held (no mass power-off)", function () {
  it("a node lost alone is fenced after unhealthyAfter at the primary rate, as before", function () {
    const { plan } = fleetAt(s(100), SIX_IN_A, { a1: s(60) });
    const p = plan("a1");
    expect(p.kind).to.equal("fence");
    expect(p.kind === "fence" && p.rate).to.equal("primary");
  });

  it("two of a zone silent in one event are held until the grace period has passed since the last went silent", function () {
    // A switch cuts a1 and a2 at 60 s: their last renewals (phases 0 and 1.3 s) were at 60 and 51.3 s.
    const at = (t: number) => fleetAt(t, SIX_IN_A, { a1: s(60.5), a2: s(60.5) });
    const held = at(s(85)).plan("a1");
    expect(held.kind).to.equal("hold");
    expect(held.kind === "hold" && held.reason).to.equal("CorrelatedSilence");
    expect(held.kind === "hold" && held.message)
      .to.include("a2")
      .and.include("node-monitor-grace-period 50s");
    // The later of the two last renewed at 60 s (a1): held until 110 s, for both.
    expect(at(s(109)).plan("a2").kind).to.equal("hold");
    const released = at(s(111)).plan("a2");
    expect(released.kind).to.equal("fence");
    expect(released.kind === "fence" && released.rate, "then at the secondary rate").to.equal("secondary");
  });

  it("the first of them is held once the other has missed a renewal, not once it is judged lost too", function () {
    // n0 and n7 (zone a, renewal phases 0 and 9.1 s) are cut off at 59.5 s: n0 last renewed at 50 s,
    // n7 at 59.1 s (seen at 60 s). n0 is judged lost at 71 s, n7 only at 81 s.
    const zones = { n0: "a", n1: "b", n2: "b", n3: "b", n4: "b", n5: "b", n6: "b", n7: "a", n8: "b" };
    const at = (t: number, stops: Record<string, number> = { n0: s(59.5), n7: s(59.5) }) =>
      fleetAt(t, zones, stops);
    // At 71 s n7 is 11 s silent: its renewal may still come (10 s, and two checks' delay).
    expect(at(s(71)).plan("n0")).to.deep.equal({ kind: "wait-for-peers", waiting: ["n7"] });
    // At 73 s it has missed it: silent with n0, both held, 8 s before n7 is judged lost.
    const held = at(s(73)).plan("n0");
    expect(held.kind === "hold" && held.reason).to.equal("CorrelatedSilence");
    expect(held.kind === "hold" && held.message).to.include("n7");
    // Had n7 renewed (at 69.1 s), n0 was lost alone.
    expect(at(s(71), { n0: s(59.5) }).plan("n0")).to.deep.include({ kind: "fence", rate: "primary" });
  });

  it("silences further apart than one renewal interval are separate losses", function () {
    // a1 stops at 40 s, a2 at 70 s: both lost at 100 s, each alone.
    const { plan } = fleetAt(s(100), SIX_IN_A, { a1: s(40), a2: s(70) });
    expect(plan("a1").kind).to.equal("fence");
    expect(plan("a2").kind).to.equal("fence");
  });

  it("nodes of different zones silent together are not held by this rule", function () {
    const { plan } = fleetAt(s(90), SIX_IN_A, { a1: s(60.5), b1: s(60.5) });
    expect(plan("a1").kind).to.equal("fence");
  });

  it("a configured silence window replaces the renewal interval", function () {
    const { plan } = fleetAt(s(100), SIX_IN_A, { a1: s(40), a2: s(70) }, { silenceWindowMs: 60_000 });
    const p = plan("a1");
    expect(p.kind === "hold" && p.reason).to.equal("CorrelatedSilence");
  });

  it("a node lost alone in a partially disrupted zone is fenced at the secondary rate", function () {
    // a1..a3 lost long ago, one by one (not one event), a4 now: 4 of 6 not ready in zone a.
    const stops = { a1: s(10), a2: s(40), a3: s(70), a4: s(100) };
    const { view, config } = fleetAt(s(130), SIX_IN_A, stops);
    expect(view.zones.get("a")?.state).to.equal("PartialDisruption");
    expect(fleetDecision("a4", view, config)).to.deep.include({ allowed: true, rate: "secondary" });
  });

  it("nothing is fenced while every zone is fully disrupted", function () {
    const { plan } = fleetAt(s(200), { a1: "a", b1: "b" }, { a1: s(40), b1: s(110) });
    const p = plan("a1");
    expect(p.kind === "hold" && p.reason).to.equal("AllZonesDisrupted");
  });

  it("every zone silent at once is held as the first node is judged lost, its peers counted as they miss renewals", function () {
    // Three workers in three zones lose the API server at 5 s (last renewals 0, 1.3 and 2.6 s).
    // At 21 s a1 is judged lost and b1, c1 (18-19 s silent) have missed a renewal: every zone is
    // down, whatever maxUnhealthy (100 % here) allows.
    const { plan } = fleetAt(s(21), { a1: "a", b1: "b", c1: "c" }, { a1: s(5), b1: s(5), c1: s(5) });
    const p = plan("a1");
    expect(p.kind === "hold" && p.reason).to.equal("AllZonesDisrupted");
    expect(p.kind === "hold" && p.message).to.include("3 nodes not ready or silent past a renewal");
  });

  it("without a fleet view (older callers) a lost node is fenced at the primary rate", function () {
    const nodes: ScriptedNode[] = [{ name: "a1", zone: "a", alive: (t) => t <= s(30) }];
    const o = observations({ checkIntervalMs: 1_000 });
    replay(o, nodes, { from: s(0), to: s(60) });
    const snapshot: Snapshot = { ...snapshotAt(nodes, s(60), s(0)), fences: new Map(), paused: false };
    const health = assessNodes(snapshot, o, s(60), 20_000);
    const guard = guardNodes(snapshot, health, "x");
    expect(
      planNode("a1", snapshot, o, health, guard, { maxUnhealthy: "1", checkIntervalMs: 1_000 }),
    ).to.deep.include({ kind: "fence", rate: "primary" });
  });
});

describe("controller: fleet settings", function () {
  it("parses the flags and refuses bad values naming the flag", function () {
    expect(
      fleetSettingsFrom({
        "node-monitor-grace-period": "40s",
        "fence-rate": "0.5",
        "secondary-fence-rate": "0.1",
        "fence-burst": "2",
        "unhealthy-zone-threshold": "0.6",
        "silence-window": "5s",
      }),
    ).to.deep.equal({
      nodeMonitorGracePeriodMs: 40_000,
      fenceRatePerMinute: 0.5,
      secondaryFenceRatePerMinute: 0.1,
      fenceBurst: 2,
      unhealthyZoneThreshold: 0.6,
      silenceWindowMs: 5_000,
    });
    for (const [flag, value] of [
      ["fence-rate", "0"],
      ["fence-rate", "fast"],
      ["fence-burst", "0"],
      ["unhealthy-zone-threshold", "1.5"],
      ["node-monitor-grace-period", "0s"],
    ] as const) {
      expect(() => fleetSettingsFrom({ [flag]: value }), `${flag} ${value}`)
        .to.throw(RekindleError)
        .with.property("message")
        .that.includes(`--${flag}`);
    }
  });

  it("refuses a secondary rate faster than the primary one", function () {
    expect(() => {
      validateFleetConfig({
        ...DEFAULT_CONTROLLER_CONFIG,
        fenceRatePerMinute: 1,
        secondaryFenceRatePerMinute: 2,
      });
    }).to.throw(/--secondary-fence-rate 2 is faster than --fence-rate 1/);
    expect(() => {
      validateFleetConfig(DEFAULT_CONTROLLER_CONFIG);
    }).not.to.throw();
  });
});
