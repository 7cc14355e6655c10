import { expect } from "chai";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TIMING_PROFILES, TIMING_PROFILE_NAMES } from "../../lib/cluster/profiles.js";
import {
  clientBacklogMs,
  controllerRequestRate,
  largeZonePlan,
  lostNodeRequests,
  normalEvictionByMs,
  partialDisruptionLoss,
  smallZonePlan,
  taintGapMs,
  unknownAfterStopMs,
  zoneEvictionRate,
  zoneState,
} from "../../lib/expect/zone-disruption.js";
import { isRecordedMilestoneName } from "../../lib/observe/milestone-names.js";
import {
  ZoneStateLog,
  zoneOfKey,
  zoneStateChangesIn,
  zoneStateMilestoneName,
} from "../../lib/observe/zone-states.js";
import type { Transition } from "../../lib/observe/types.js";
import type { DeriveContext } from "../../lib/scenario/harness.js";
import { LogFollower } from "../../lib/observe/klog.js";
import { awaitZoneStatesInLog, judgedMilestones, taintsLifted } from "../../lib/scenario/zone-carve.js";
import { otherZoneSize, otherZones } from "../../suites/zone-disruption/other-zones.js";

const upstream = TIMING_PROFILES.default;
const fast = TIMING_PROFILES.fast;

// Lines as kube-controller-manager v1.34.4 writes them (node_lifecycle_controller.go), copied from a sim's log.
const PARTIAL_LINE =
  'I1125 06:41:20.465726   21288 node_lifecycle_controller.go:1067] "Controller detected that zone is now in new state" logger="node-lifecycle-controller" zone="sim:\\x00:zd-small" newState="PartialDisruption"';
const NORMAL_LINE =
  'I1125 06:41:22.634748   21288 node_lifecycle_controller.go:1067] "Controller detected that zone is now in new state" logger="node-lifecycle-controller" zone="sim:\\x00:zone-a" newState="Normal"';
const ENTERED_LINE =
  'I1125 06:42:00.000001   21288 node_lifecycle_controller.go:1025] "Controller detected that all Nodes are not-Ready. Entering master disruption mode" logger="node-lifecycle-controller"';
const EXITED_LINE =
  'I1125 06:43:00.000001   21288 node_lifecycle_controller.go:1044] "Controller detected that some Nodes are Ready. Exiting master disruption mode" logger="node-lifecycle-controller"';
const OTHER_LINE =
  'I1125 06:41:01.389332   21288 node_lifecycle_controller.go:1221] "Initializing eviction metric for zone" logger="node-lifecycle-controller" zone="sim:\\x00:zone-a"';

describe("zone disruption model (node lifecycle controller v1.34)", function () {
  it("computes the zone state as ComputeZoneState does", function () {
    expect(zoneState(2, 0, 0.55)).to.equal("FullDisruption");
    expect(zoneState(0, 0, 0.55)).to.equal("Normal");
    // Two not Ready is never partial, whatever the share.
    expect(zoneState(2, 1, 0.55)).to.equal("Normal");
    expect(zoneState(3, 2, 0.55)).to.equal("PartialDisruption");
    // 6 of 11 is 54.5 %, under 55 %; 7 of 11 is over.
    expect(zoneState(6, 5, 0.55)).to.equal("Normal");
    expect(zoneState(7, 4, 0.55)).to.equal("PartialDisruption");
    // Exactly at the threshold counts (>=), compared in float32 as upstream does.
    expect(zoneState(11, 9, 0.55)).to.equal("PartialDisruption");
  });

  it("swaps the taint rate by state and zone size", function () {
    expect(zoneEvictionRate(upstream, "Normal", 10)).to.equal(0.1);
    expect(zoneEvictionRate(upstream, "PartialDisruption", 50)).to.equal(0);
    expect(zoneEvictionRate(upstream, "PartialDisruption", 51)).to.equal(0.01);
    // One zone fully disrupted among others that are not: the normal rate (HealthyQPSFunc).
    expect(zoneEvictionRate(upstream, "FullDisruption", 5)).to.equal(0.1);
    expect(zoneEvictionRate(upstream, "FullDisruption", 5, true)).to.equal(0);
    expect(taintGapMs(0.01)).to.equal(100_000);
    expect(taintGapMs(0)).to.equal(Infinity);
  });

  it("finds the fewest lost nodes that make a zone PartialDisruption", function () {
    expect(partialDisruptionLoss(5, 0.55)).to.equal(3);
    expect(partialDisruptionLoss(11, 0.55)).to.equal(7);
    expect(partialDisruptionLoss(51, 0.55)).to.equal(29);
    // A zone of 3 is fully disrupted before it is partially.
    expect(partialDisruptionLoss(3, 0.55)).to.equal(undefined);
  });

  it("plans the smallest small zone: partial, one more lost, one still Ready", function () {
    expect(smallZonePlan(upstream)).to.deep.equal({ size: 5, firstLoss: 3, judged: 1, partialRate: 0 });
    expect(smallZonePlan(fast)).to.deep.equal({ size: 5, firstLoss: 3, judged: 1, partialRate: 0 });
    expect(smallZonePlan({ ...fast, largeClusterSizeThreshold: 4 })).to.equal(undefined);
  });

  it("plans the smallest large zone, tainting at the secondary rate", function () {
    expect(largeZonePlan(upstream)).to.deep.equal({ size: 51, firstLoss: 29, judged: 3, partialRate: 0.01 });
    expect(largeZonePlan(fast)).to.deep.equal({ size: 11, firstLoss: 7, judged: 3, partialRate: 0.2 });
  });

  it("derives the windows from the knobs", function () {
    expect(unknownAfterStopMs(fast)).to.deep.equal({ minMs: 8_000, maxMs: 11_000 });
    expect(unknownAfterStopMs(upstream)).to.deep.equal({ minMs: 40_000, maxMs: 55_000 });
    expect(normalEvictionByMs(fast)).to.equal(500 + 5_000 + 1_000);
  });

  it("a mass loss's requests past the client's burst delay the monitor pass (and its zone states)", function () {
    // The measured every-zone-full losses: 50 nodes at upstream's 20 QPS (state 5.7 s past the
    // lone-node bound), 998 at the large profile's 200 QPS (28.7 s past it: the API server's pace).
    expect(lostNodeRequests(2)).to.equal(5);
    expect(clientBacklogMs(upstream, 50 * lostNodeRequests(2))).to.equal(11_000);
    expect(controllerRequestRate(TIMING_PROFILES.large)).to.equal(150);
    expect(clientBacklogMs(TIMING_PROFILES.large, 998 * lostNodeRequests(2))).to.equal(31_267);
    // Within the burst a lost node costs nothing: the small zones' first losses keep the bare window.
    expect(clientBacklogMs(upstream, 6 * lostNodeRequests(2))).to.equal(0);
  });

  it("no profile sets an eviction rate of exactly 1 (a swap back from 0 to 1 is a no-op upstream)", function () {
    for (const name of TIMING_PROFILE_NAMES) {
      expect(TIMING_PROFILES[name].nodeEvictionRate, name).to.not.equal(1);
      expect(TIMING_PROFILES[name].secondaryNodeEvictionRate, name).to.not.equal(1);
    }
    expect(upstream).to.include({
      secondaryNodeEvictionRate: 0.01,
      unhealthyZoneThreshold: 0.55,
      largeClusterSizeThreshold: 50,
    });
  });
});

describe("zone states from kube-controller-manager's log", function () {
  const now = new Date(2026, 10, 25, 8, 0, 0);

  it("reads zone changes and master disruption mode, the zone from the controller's key", function () {
    const changes = zoneStateChangesIn(
      [OTHER_LINE, PARTIAL_LINE, NORMAL_LINE, ENTERED_LINE, EXITED_LINE],
      now,
    );
    expect(changes.map(zoneStateMilestoneName)).to.deep.equal([
      "zone-state:zd-small:PartialDisruption",
      "zone-state:zone-a:Normal",
      "disruption-mode:entered",
      "disruption-mode:exited",
    ]);
    expect(changes[0]?.atMs).to.equal(new Date(2026, 10, 25, 6, 41, 20, 465).getTime());
    expect(zoneOfKey("sim:\u0000:zone-b")).to.equal("zone-b");
    expect(zoneOfKey("")).to.equal("");
  });

  it("names only milestones the recorder's vocabulary accepts", function () {
    expect(isRecordedMilestoneName("zone-state:zd-small:PartialDisruption", [])).to.equal(true);
    expect(isRecordedMilestoneName("disruption-mode:entered", [])).to.equal(true);
    expect(isRecordedMilestoneName("zone-state:zd-small:Broken", [])).to.equal(false);
    expect(isRecordedMilestoneName("zone-state:zd-small:Normal@worker-1", [])).to.equal(false);
  });

  it("follows the log: milestones after the fault, each name once", function () {
    const dir = mkdtempSync(join(tmpdir(), "zone-states-"));
    try {
      const path = join(dir, "kube-controller-manager.log");
      writeFileSync(path, `${PARTIAL_LINE}\n`);
      const log = new ZoneStateLog(path);
      // Lines written before the log is followed are not read.
      expect(log.milestones(0)).to.deep.equal([]);
      appendFileSync(path, `${NORMAL_LINE}\n${PARTIAL_LINE}\n${ENTERED_LINE}\n`);
      const faultAtMs = new Date(new Date().getFullYear(), 10, 25, 6, 41, 21).getTime();
      const names = log.milestones(faultAtMs).map((m) => m.name);
      expect(names).to.deep.equal(["zone-state:zone-a:Normal", "disruption-mode:entered"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("awaiting zones' states in kube-controller-manager's log", function () {
  const normal = (zone: string) => NORMAL_LINE.replace("zone-a", zone);

  /** A follower of a new, empty log to which `lines` are then written in one batch. */
  async function withLog<T>(lines: string[], use: (follower: LogFollower) => Promise<T>): Promise<T> {
    const dir = mkdtempSync(join(tmpdir(), "zone-await-"));
    try {
      const path = join(dir, "kube-controller-manager.log");
      writeFileSync(path, "");
      const follower = new LogFollower(path);
      appendFileSync(path, lines.map((l) => `${l}\n`).join(""));
      return await use(follower);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it("sees every zone of one batch of lines, each line read once (a fleet's 143 zones at once)", async function () {
    await withLog([normal("zd-rest-1"), OTHER_LINE, normal("zd-rest-2"), PARTIAL_LINE], (follower) =>
      awaitZoneStatesInLog(follower, ["zd-rest-1", "zd-rest-2"], "Normal", 2_000),
    );
  });

  it("times out naming the zones when one never gets there", async function () {
    const error = await withLog([normal("zd-rest-1"), PARTIAL_LINE], (follower) =>
      awaitZoneStatesInLog(follower, ["zd-rest-1", "zd-small"], "Normal", 600).then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    expect(String(error)).to.include("zone zd-rest-1, zd-small Normal");
  });
});

describe("zone scenarios' derived milestones", function () {
  const faultAtMs = 1_000_000;
  const inputs = undefined as unknown as DeriveContext["inputs"];
  const context: DeriveContext = {
    faultAtMs,
    faultNodes: ["worker-1", "worker-2", "worker-3", "worker-4"],
    namespace: "ns",
    inputs,
  };
  const nodeT = (
    name: Transition["name"],
    node: string,
    atMs: number,
    detail: Record<string, string>,
  ): Transition => ({
    name,
    atMs: faultAtMs + atMs,
    subject: { kind: "Node", name: node },
    node,
    detail,
    source: "watch",
  });
  const taint = (name: "taint-added" | "taint-removed", node: string, atMs: number, effect = "NoExecute") =>
    nodeT(name, node, atMs, { key: "node.kubernetes.io/unreachable", effect });
  const unknown = (node: string, atMs: number) =>
    nodeT("node-condition", node, atMs, { type: "Ready", status: "Unknown" });
  const deletion = (node: string, atMs: number, namespace = "ns"): Transition => ({
    name: "pod-deletion-requested",
    atMs: faultAtMs + atMs,
    subject: { kind: "Pod", name: `web-${node}`, namespace },
    node,
    source: "watch",
  });

  it("numbers the judged nodes' Unknown, NoExecute taint and eviction in time order, NoSchedule ignored", function () {
    const transitions = [
      unknown("worker-1", 9_000),
      taint("taint-added", "worker-1", 9_100),
      unknown("worker-4", 19_000),
      unknown("worker-3", 19_100),
      taint("taint-added", "worker-3", 19_050, "NoSchedule"),
      taint("taint-added", "worker-4", 19_200),
      taint("taint-added", "worker-3", 24_200),
      deletion("worker-4", 24_300),
      deletion("worker-3", 29_300, "other"),
    ];
    const names = judgedMilestones(transitions, context, 2).map((m) => `${m.name}@${m.node ?? ""}:${m.atMs}`);
    expect(names).to.deep.equal([
      "judged-unknown-1@worker-4:19000",
      "judged-unknown-2@worker-3:19100",
      "judged-taint-1@worker-4:19200",
      "judged-taint-2@worker-3:24200",
      "judged-eviction-1@worker-4:24300",
    ]);
  });

  it("lifts the taints only once every NoExecute taint put since the fault is removed", function () {
    const nodes = ["worker-1", "worker-2"];
    const added = [taint("taint-added", "worker-1", 9_000), taint("taint-added", "worker-2", 9_500)];
    expect(taintsLifted(added, context, nodes)).to.deep.equal([]);
    const oneLifted = [...added, taint("taint-removed", "worker-1", 20_000)];
    expect(taintsLifted(oneLifted, context, nodes)).to.deep.equal([]);
    const both = [
      ...oneLifted,
      taint("taint-removed", "worker-2", 20_100, "NoSchedule"),
      taint("taint-removed", "worker-2", 20_200),
    ];
    expect(taintsLifted(both, context, nodes)).to.deep.equal([{ name: "taints-lifted", atMs: 20_200 }]);
    expect(taintsLifted([], context, nodes)).to.deep.equal([]);
  });
});

describe("every-zone-full's other zones", function () {
  const labels = (zones: Record<string, string[]>) =>
    new Map(Object.entries(zones).flatMap(([zone, nodes]) => nodes.map((n) => [n, zone] as const)));
  const workers = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => `worker-${from + i}`);

  it("sizes the zones so each is tainted whole within the budget at the normal rate", function () {
    // Upstream's 0.1/s: the first node at once, then one per 10 s: 7 nodes in 60 s.
    expect(otherZoneSize(TIMING_PROFILES.large)).to.equal(7);
    expect(otherZoneSize(TIMING_PROFILES.default)).to.equal(7);
    // The fast profile's 2/s: 121 nodes in 60 s, far above a scenario-sized cluster.
    expect(otherZoneSize(TIMING_PROFILES.fast)).to.equal(121);
  });

  it("leaves a scenario-sized cluster's zones as they are", function () {
    const other = workers(6, 4);
    const own = otherZones(other, labels({ "zone-a": other.slice(0, 2), "zone-b": other.slice(2) }), 7);
    expect(own.split).to.equal(false);
    expect([...own.zones.entries()]).to.deep.equal([
      ["zone-a", other.slice(0, 2)],
      ["zone-b", other.slice(2)],
    ]);
  });

  it("splits a fleet's zones into zones of at most that size, every node in one of them", function () {
    const other = workers(6, 995);
    const { zones: split, split: isSplit } = otherZones(
      other,
      labels({ "zone-a": other.slice(0, 332), "zone-b": other.slice(332, 664), "zone-c": other.slice(664) }),
      7,
    );
    expect(isSplit).to.equal(true);
    expect(split.size).to.equal(143);
    expect([...split.values()].every((nodes) => nodes.length <= 7)).to.equal(true);
    expect([...split.values()].flat()).to.deep.equal(other);
    expect([...split.keys()].slice(0, 2)).to.deep.equal(["zd-rest-1", "zd-rest-2"]);
  });
});
