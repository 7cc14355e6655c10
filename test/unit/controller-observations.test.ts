import { expect } from "chai";
import { assessNode, peersSilentWith } from "../../lib/controller/detect.js";
import type { NodeObservations } from "../../lib/controller/observations.js";
import { observations, replay, type ScriptedNode } from "../support/node-history.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const s = (seconds: number) => T0 + seconds * 1000;
const UNHEALTHY_AFTER = 20_000;

function stateAt(o: NodeObservations, node: string, t: number) {
  return assessNode(o.get(node), t, UNHEALTHY_AFTER).state;
}

/** Replays second by second, collecting the nodes judged unhealthy at each tick. */
function unhealthyTicks(
  o: NodeObservations,
  nodes: ScriptedNode[],
  options: Omit<Parameters<typeof replay>[2], "to" | "from"> & { to: number },
  node: string,
): number[] {
  const ticks: number[] = [];
  for (let t = s(0); t <= options.to; t += 1_000) {
    replay(o, nodes, { ...options, origin: s(0), from: t, to: t });
    // The controller judges only after a read completed.
    if (options.skip?.(t) || options.blind?.(t)) continue;
    if (stateAt(o, node, t) === "unhealthy") ticks.push((t - T0) / 1000);
  }
  return ticks;
}

describe("controller: observations on its own clock", function () {
  const always = () => true;

  it("a kubelet whose clock runs 30 s behind stays healthy while it renews", function () {
    const nodes = [{ name: "skewed", alive: always, skewMs: -30_000 }];
    expect(unhealthyTicks(observations(), nodes, { to: s(300) }, "skewed")).to.deep.equal([]);
  });

  it("a node that stops renewing is lost unhealthyAfter after the last renewal this controller saw", function () {
    // Renewals every 10 s; the last at 30 s.
    const nodes = [{ name: "a", alive: (t: number) => t <= s(30) }];
    const o = observations();
    replay(o, nodes, { from: s(0), to: s(50) });
    expect(stateAt(o, "a", s(50))).to.equal("healthy");
    replay(o, nodes, { origin: s(0), from: s(51), to: s(51) });
    expect(stateAt(o, "a", s(51))).to.equal("unhealthy");
  });

  it("a node never seen renewing gets a whole unhealthyAfter from first sight (a controller restart)", function () {
    // Its last renewal was 100 s before this controller started.
    const nodes = [{ name: "dead", alive: (t: number) => t <= s(-100) }];
    const fresh = observations();
    replay(fresh, nodes, { origin: s(-200), from: s(0), to: s(20) });
    expect(fresh.get("dead")?.renewTime).to.be.a("string");
    // No evidence either way for unhealthyAfter: neither fenced nor let go.
    expect(stateAt(fresh, "dead", s(20))).to.equal("unobserved");
    replay(fresh, nodes, { origin: s(-200), from: s(21), to: s(21) });
    expect(stateAt(fresh, "dead", s(21))).to.equal("unhealthy");
  });

  it("after failed reads (API away 60 s) every node gets unhealthyAfter to renew", function () {
    // Nobody can renew while the API is away (40 s to 100 s); nodes renew again afterwards.
    const away = (t: number) => t > s(40) && t < s(100);
    const nodes = ["a", "b", "c"].map((name, i) => ({
      name,
      phaseMs: i * 3_000,
      alive: (t: number) => !away(t),
    }));
    const o = observations();
    const seen: Record<string, number[]> = { a: [], b: [], c: [] };
    for (let t = s(0); t <= s(160); t += 1_000) {
      replay(o, nodes, { origin: s(0), from: t, to: t, blind: away });
      if (away(t)) continue;
      for (const name of ["a", "b", "c"]) if (stateAt(o, name, t) === "unhealthy") seen[name]!.push(t);
    }
    expect(seen).to.deep.equal({ a: [], b: [], c: [] });
  });

  // Paused from 40 s to 105 s; the node renews at 110 s, 5 s after the API server is back.
  const paused = (t: number) => t > s(40) && t < s(105);
  const pausedNodes = [{ name: "a", alive: (t: number) => !paused(t) }];

  it("after blindness a node is unobserved (no evidence either way) until it is seen renewing", function () {
    const o = observations();
    const nodes = [{ name: "a", alive: () => true }];
    replay(o, nodes, { from: s(0), to: s(30) });
    expect(stateAt(o, "a", s(30))).to.equal("healthy");
    replay(o, nodes, { origin: s(0), from: s(31), to: s(35), blind: (t) => t < s(35) });
    expect(stateAt(o, "a", s(35))).to.equal("unobserved");
    replay(o, nodes, { origin: s(0), from: s(36), to: s(40) });
    expect(stateAt(o, "a", s(40))).to.equal("healthy");
  });

  it("a Lease watch stale through an API server pause counts as blindness too", function () {
    const ticks = unhealthyTicks(
      observations(),
      pausedNodes,
      { to: s(160), skip: paused, blindSpellSince: (t) => (t === s(105) ? s(40) : undefined) },
      "a",
    );
    expect(ticks).to.deep.equal([]);
  });

  it("without blindness the same silence is a loss: the rule is what protects the nodes", function () {
    const ticks = unhealthyTicks(observations(), pausedNodes, { to: s(110), skip: paused }, "a");
    expect(ticks).to.include(105);
  });

  it("nodes partitioned together: when one renews, the others get a fresh chance", function () {
    // a and b (one zone) are cut off from 35 s to 70 s; b renews 8 s after a once healed.
    const cut = (t: number) => t > s(35) && t < s(70);
    const nodes = [
      { name: "a", phaseMs: 0, alive: (t: number) => !cut(t) },
      { name: "b", phaseMs: 8_000, alive: (t: number) => !cut(t) },
      { name: "c", phaseMs: 4_000, alive: () => true },
    ];
    const o = observations();
    const bTicks = unhealthyTicks(o, nodes, { to: s(120) }, "b");
    // b is lost during the partition (the guard's zone budget holds it), never after a returned (70 s).
    expect(bTicks.length).to.be.greaterThan(0);
    expect(bTicks.filter((t) => t >= 70)).to.deep.equal([]);
  });

  it("a node dead on its own is not shielded by peers renewing on time", function () {
    const nodes = [
      { name: "dead", phaseMs: 0, alive: (t: number) => t <= s(30) },
      { name: "b", phaseMs: 5_000, alive: () => true },
    ];
    const ticks = unhealthyTicks(observations(), nodes, { to: s(60) }, "dead");
    expect(ticks[0]).to.equal(51);
  });

  it("a Node object registered again under the name starts afresh", function () {
    const o = observations();
    replay(o, [{ name: "n", alive: () => true, uid: "old" }], { from: s(0), to: s(10) });
    expect(o.get("n")?.uid).to.equal("old");
    replay(o, [{ name: "n", alive: () => true, uid: "new" }], { origin: s(0), from: s(11), to: s(11) });
    expect(o.get("n")?.uid).to.equal("new");
    expect(o.get("n")?.lastSignAt).to.equal(s(11));
  });

  describe("nodes lost together", function () {
    it("a silent peer that may have failed in the same event is due until it misses a renewal, then overdue", function () {
      // Both stopped after their renewals at 20 s and 24 s; c renews on time.
      const nodes = [
        { name: "a", phaseMs: 0, alive: (t: number) => t <= s(20) },
        { name: "b", phaseMs: 4_000, alive: (t: number) => t <= s(24) },
        { name: "c", phaseMs: 8_000, alive: () => true },
      ];
      const peersAt = (t: number, unhealthyB = false) => {
        const o = observations();
        replay(o, nodes, { from: s(0), to: t });
        const peers = ["a", "b", "c"].map((name) => ({
          name,
          observation: o.get(name),
          unhealthy: name === "b" && unhealthyB,
        }));
        return peersSilentWith("a", o.get("a"), peers, t, 1_000);
      };
      // At 35 s b is silent 11 s: its renewal (34 s) may still come. c renewed at 28 s: in the window
      // (a's next renewal was due by 31 s), and due again at 38 s.
      expect(peersAt(s(35))).to.deep.equal({ overdue: [], due: ["b", "c"] });
      // At 39 s b is 15 s silent, past a renewal's 12 s (10 s and two checks): overdue. c renewed at
      // 38 s, after a's renewal was due: alive after a failed, not a peer any more.
      expect(peersAt(s(39))).to.deep.equal({ overdue: ["b"], due: [] });
      // b judged lost: counted by the guard as it is, not here.
      expect(peersAt(s(45), true)).to.deep.equal({ overdue: [], due: [] });
    });

    it("a peer without a known renewal cadence is due until judged lost", function () {
      const o = observations();
      replay(o, [{ name: "a", alive: (t: number) => t <= s(20) }], { from: s(0), to: s(41) });
      const a = o.get("a");
      if (a === undefined) throw new Error("a not observed");
      // A peer silent as long as a (21 s), whose Lease gives no duration.
      const peers = [{ name: "p", observation: { ...a, renewIntervalMs: undefined }, unhealthy: false }];
      expect(peersSilentWith("a", a, peers, s(41), 1_000)).to.deep.equal({ overdue: [], due: ["p"] });
    });
  });
});

describe("controller: Ready is no verdict on a node that renews", function () {
  it("a renewing node with Ready=Unknown (the node lifecycle controller's guess) or False is suspect, never lost", function () {
    for (const ready of ["Unknown", "False"] as const) {
      const o = observations();
      const nodes = [{ name: "a", alive: () => true, ready }];
      replay(o, nodes, { from: s(0), to: s(120) });
      expect(stateAt(o, "a", s(120)), ready).to.equal("suspect");
    }
  });

  it("a node without a Lease is judged by Ready", function () {
    const o = observations();
    const nodes = [{ name: "a", alive: () => false, ready: "Unknown" as const }];
    replay(o, nodes, { from: s(0), to: s(20) });
    expect(stateAt(o, "a", s(20))).to.equal("suspect");
    replay(o, nodes, { origin: s(0), from: s(21), to: s(21) });
    expect(stateAt(o, "a", s(21))).to.equal("unhealthy");
  });
});
