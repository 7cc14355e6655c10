// The early power read's notices (issue 25, item 7): a driver that hears of a power loss brings
// the read forward. Fake clock and a scripted driver.
import { expect } from "chai";
import { assessNode } from "../../lib/controller/detect.js";
import { watchPowerLosses } from "../../lib/controller/early-power.js";
import type { FenceDriver, PowerLossNotice } from "../../lib/controller/drivers/types.js";
import {
  CHECK_MS,
  UNHEALTHY_AFTER_MS,
  cluster,
  earlyReads,
  s,
  scriptedReads,
} from "../support/early-power.js";
import { observations, replay, type ScriptedNode } from "../support/node-history.js";

/** Node a renews every 10 s until its power goes at 50.35 s; the passes have run up to 49 s. */
function poweredOffAfterAnUnseenRenewal() {
  const nodes: ScriptedNode[] = [{ name: "a", zone: "z", phaseMs: 0, alive: (t) => t < s(50.35) }];
  const o = observations({ checkIntervalMs: CHECK_MS, unhealthyAfterMs: UNHEALTHY_AFTER_MS });
  replay(o, nodes, { from: s(0), to: s(49) });
  return { nodes, o };
}

describe("controller: early power read", function () {
  describe("a driver's notice of a power loss", function () {
    it("brings the read forward: a node stopped after its renewal is read off at once, not at its missed renewal", async function () {
      const now = s(52); // a renewed at 50 s and stopped at 51 s: it has missed nothing yet
      const { o } = cluster({ a: s(51) }, now);
      const driver = scriptedReads({ a: "off", b: "on" });
      const early = earlyReads(o, { read: driver.read, now: () => now });
      early.launch(["a", "b", "c"]);
      await early.settle();
      expect(driver.reads, "nothing missed, nothing read").to.deep.equal([]);
      early.notice((node) => node === "a");
      await early.settle();
      expect(driver.reads).to.deep.equal(["a"]);
      expect(assessNode(o.get("a"), now, UNHEALTHY_AFTER_MS)).to.deep.include({
        state: "unhealthy",
        poweredOff: true,
      });
    });

    it("keeps a notice whose read was skipped because the pass had not seen the node's last renewal yet, once", async function () {
      // a renews at 40 and 50 s and loses its power at 50.35 s; the last pass (49 s) saw the 40 s
      // renewal, the watch cache already has the 50 s one. The notice at 50.4 s is not read (the
      // cache is ahead of the observation it would be keyed on), and not lost either: the next
      // pass has caught up and reads it off, without waiting for its missed renewal at 62 s.
      const { nodes, o } = poweredOffAfterAnUnseenRenewal();
      const seenAt49 = o.get("a")?.renewTime;
      const caught = observations({ checkIntervalMs: CHECK_MS, unhealthyAfterMs: UNHEALTHY_AFTER_MS });
      replay(caught, nodes, { from: s(0), to: s(51) });
      const cached = caught.get("a")?.renewTime;
      expect(cached, "the cache's renewal is newer").to.not.equal(seenAt49);
      let now = s(50.4);
      const driver = scriptedReads({ a: "off" });
      const early = earlyReads(o, {
        read: driver.read,
        now: () => now,
        current: () => Promise.resolve({ renewTime: cached }),
      });
      early.launch(["a"]);
      early.notice((node) => node === "a");
      await early.settle();
      expect(driver.reads, "skipped: renewed since the observation").to.deep.equal([]);
      now = s(51);
      replay(o, nodes, { from: s(51), origin: s(0), to: s(51) });
      early.launch(["a"]);
      await early.settle();
      expect(driver.reads, "read at the next pass").to.deep.equal(["a"]);
      expect(assessNode(o.get("a"), now, UNHEALTHY_AFTER_MS)).to.deep.include({
        state: "unhealthy",
        poweredOff: true,
      });
    });

    it("re-arms a skipped notice once, not at every pass", async function () {
      const { o } = poweredOffAfterAnUnseenRenewal();
      const driver = scriptedReads({ a: "off" });
      let asked = 0;
      // The cache is always ahead (the pass never catches up, as with a renewal every pass).
      const early = earlyReads(o, {
        read: driver.read,
        now: () => s(50.4),
        current: () => {
          asked += 1;
          return Promise.resolve({ renewTime: "2026-01-01T00:00:50.000000Z" });
        },
      });
      early.launch(["a"]);
      early.notice((node) => node === "a");
      await early.settle();
      early.launch(["a"]);
      await early.settle();
      early.launch(["a"]);
      await early.settle();
      expect(driver.reads).to.deep.equal([]);
      expect(asked, "at the notice and at its one re-armed read; no missed renewal is due").to.equal(2);
    });

    it("is a hint only: a node the notice names but the driver reads on keeps its normal path", async function () {
      let now = s(52);
      const { o } = cluster({}, now);
      const driver = scriptedReads({});
      const early = earlyReads(o, { read: driver.read, now: () => now });
      early.launch(["a", "b", "c"]);
      early.notice((node) => node === "b");
      await early.settle();
      expect(driver.reads).to.deep.equal(["b"]);
      expect(assessNode(o.get("b"), now, UNHEALTHY_AFTER_MS).state).to.equal("healthy");
      // The next pass reads nothing more: the notice was used up, and b misses no renewal.
      now = s(53);
      early.launch(["a", "b", "c"]);
      await early.settle();
      expect(driver.reads).to.deep.equal(["b"]);
    });

    it("leaves a node that said it was not Ready (a graceful shutdown: NotReady, then silent) to its missed renewal", async function () {
      const nodes: ScriptedNode[] = [
        { name: "a", zone: "z", phaseMs: 0, alive: (t) => t < s(51) },
        { name: "b", zone: "z", phaseMs: 0, alive: (t) => t < s(51), ready: "False" },
      ];
      const o = observations({ checkIntervalMs: CHECK_MS, unhealthyAfterMs: UNHEALTHY_AFTER_MS });
      replay(o, nodes, { from: s(0), to: s(52) });
      const driver = scriptedReads({ a: "off", b: "off" });
      const early = earlyReads(o, { read: driver.read, now: () => s(52) });
      early.launch(["a", "b"]);
      early.notice(() => true);
      await early.settle();
      expect(driver.reads).to.deep.equal(["a"]);
    });
    it("names candidates only: not a node with a fence under way, nor one the guard excludes", async function () {
      const now = s(52);
      const { o } = cluster({ a: s(51), b: s(51) }, now);
      const driver = scriptedReads({ a: "off", b: "off" });
      const early = earlyReads(o, { read: driver.read, now: () => now });
      early.launch(["a"]);
      early.notice(() => true);
      await early.settle();
      expect(driver.reads).to.deep.equal(["a"]);
      early.stop();
      early.notice(() => true);
      await early.settle();
      expect(driver.reads, "none after stop").to.deep.equal(["a"]);
    });

    it("maps a notice to the nodes whose template names the driver that gave it and whose target it names", async function () {
      const now = s(52);
      const { o } = cluster({ a: s(51), b: s(51), c: s(51) }, now);
      const reads = scriptedReads({ a: "off", b: "off", c: "off" });
      const early = earlyReads(o, { read: reads.read, now: () => now });
      early.launch(["a", "b", "c"]);
      const notices = new Map<string, PowerLossNotice>();
      const watching = (name: string): FenceDriver => ({
        name,
        powerOff: () => Promise.resolve(),
        powerState: () => Promise.resolve("unknown"),
        watchPowerLoss: (onPowerLoss) => {
          notices.set(name, onPowerLoss);
        },
      });
      const silent: FenceDriver = { ...watching("silent"), watchPowerLoss: undefined };
      const stopped = new AbortController();
      watchPowerLosses(
        early,
        new Map([
          ["engine", watching("engine")],
          ["unused", watching("unused")],
          ["silent", silent],
        ]),
        {
          templates: {
            engine: { driver: "engine", options: { container: "box-{{node}}" } },
            other: { driver: "silent" },
          },
          nodes: { a: "engine", b: "engine", c: "other" },
        },
        { signal: stopped.signal, log: () => undefined },
      );
      expect([...notices.keys()], "only drivers a template names are watched").to.deep.equal(["engine"]);
      // The engine saw box-b die: b is read, not a (another container) nor c (another driver).
      notices.get("engine")?.((target) => target.options["container"] === "box-b");
      await early.settle();
      expect(reads.reads).to.deep.equal(["b"]);
      notices.get("engine")?.((target) => target.node === "c");
      await early.settle();
      expect(reads.reads, "c's template names another driver").to.deep.equal(["b"]);
    });
  });
});
