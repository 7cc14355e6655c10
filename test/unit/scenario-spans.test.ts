import { expect } from "chai";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { queueOrder } from "../../lib/run/parallel-queue.js";
import { ScenarioSpans, SpanClock } from "../../lib/run/scenario-spans.js";

function spansFile(): string {
  return join(mkdtempSync(join(tmpdir(), "scenario-spans-")), "scenario-spans.json");
}

describe("scenario spans (the --parallel queue's order)", function () {
  it("a scenario's span runs from its cluster taking it to that cluster asking again, per cluster", function () {
    const path = spansFile();
    let now = 0;
    const spans = new ScenarioSpans({ provider: "sim", profile: "fast", path });
    const clock = new SpanClock(spans, () => now);
    clock.took(1, "a/long");
    now = 5_000;
    clock.took(2, "a/short");
    now = 12_000;
    clock.took(2, undefined); // a/short: 7 s
    now = 40_000;
    clock.took(1, "a/next"); // a/long: 40 s; a/next never ends here, so it is not recorded
    expect(spans.save()).to.equal(undefined);
    const again = new ScenarioSpans({ provider: "sim", profile: "fast", path });
    expect([again.get("a/long"), again.get("a/short"), again.get("a/next")]).to.deep.equal([
      40_000,
      7_000,
      undefined,
    ]);
  });

  it("keeps the mean of the last span and this run's, apart for each provider and profile", function () {
    const path = spansFile();
    const first = new ScenarioSpans({ provider: "sim", profile: "fast", path });
    first.record("a/x", 10_000);
    first.save();
    const other = new ScenarioSpans({ provider: "sim", profile: "default", path });
    other.record("a/x", 90_000);
    other.save();
    const second = new ScenarioSpans({ provider: "sim", profile: "fast", path });
    second.record("a/x", 20_000);
    second.save();
    expect(new ScenarioSpans({ provider: "sim", profile: "fast", path }).get("a/x")).to.equal(15_000);
    expect(new ScenarioSpans({ provider: "sim", profile: "default", path }).get("a/x")).to.equal(90_000);
  });

  it("a file that is not JSON, or holds what is not a span, reads as nothing measured; one that cannot be written says why", function () {
    const path = spansFile();
    writeFileSync(path, "{not json");
    expect(new ScenarioSpans({ provider: "sim", profile: "fast", path }).get("a/x")).to.equal(undefined);
    writeFileSync(path, JSON.stringify({ "sim/fast": { "a/x": "slow", "a/y": 3 } }));
    const read = new ScenarioSpans({ provider: "sim", profile: "fast", path });
    expect([read.get("a/x"), read.get("a/y")]).to.deep.equal([undefined, 3]);
    const blocked = new ScenarioSpans({ provider: "sim", profile: "fast", path: join(path, "under-a-file") });
    blocked.record("a/x", 1);
    expect(blocked.save()).to.match(/ENOTDIR|EEXIST|not a directory/i);
    expect(JSON.parse(readFileSync(path, "utf8"))).to.have.property("sim/fast");
  });

  it("the queue takes a measured span over the windows' end, and the windows' end where nothing was measured", function () {
    const order = queueOrder([
      { id: "safety/no-window", expectedMs: 0, orderMs: 50_000 },
      { id: "node-loss/windowed", expectedMs: 35_000, orderMs: 88_000 },
      { id: "partition/short", expectedMs: 5_000, orderMs: 21_000 },
      { id: "preflight/unordered", expectedMs: 30_000 },
    ]);
    expect(order).to.deep.equal([
      "node-loss/windowed",
      "safety/no-window",
      "preflight/unordered",
      "partition/short",
    ]);
  });
});
