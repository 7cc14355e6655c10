import { expect } from "chai";
import { describeOverlap, twoWriterOverlaps } from "../../lib/observe/two-writers.js";
import { parseWriterLog } from "../../lib/observe/writer-log.js";

const T0_US = 1_800_000_000_000_000;

/** One line as the Go writer appends it. */
function line(podUid: string, node: string, seq: number, atMs: number): string {
  return `${JSON.stringify({ podUid, node, pid: 1, seq, wallUs: T0_US + atMs * 1000, monoUs: seq * 100_000 })}\n`;
}

/** `count` records of one writer every 100 ms from `fromMs`. */
function run(podUid: string, node: string, fromMs: number, count: number): [number, string][] {
  return Array.from({ length: count }, (_, seq) => [
    fromMs + seq * 100,
    line(podUid, node, seq, fromMs + seq * 100),
  ]);
}

/** The log the appends of several writers make: their lines in time order. */
function logOf(...runs: [number, string][][]): string {
  return runs
    .flat()
    .sort((a, b) => a[0] - b[0])
    .map(([, text]) => text)
    .join("");
}

const ms = (atMs: number) => T0_US / 1000 + atMs;

describe("the two-writer check", function () {
  it("finds a planted overlap with its exact interval, both writers and their record counts", function () {
    // a writes 0…1900 ms on w1; b 1050…2950 ms on w2: both wrote from 1050 to 1900.
    const log = parseWriterLog(logOf(run("a", "w1", 0, 20), run("b", "w2", 1050, 20)));
    const overlaps = twoWriterOverlaps(log);
    expect(overlaps).to.deep.equal([
      {
        writers: [
          { podUid: "a", node: "w1", records: 9 },
          { podUid: "b", node: "w2", records: 9 },
        ],
        startMs: ms(1050),
        endMs: ms(1900),
        evidence: "interleaved",
      },
    ]);
    expect(describeOverlap(overlaps[0]!)).to.include("both wrote for 850 ms");
  });

  it("reports no overlap for a clean hand-over: the old writer's last record before the new one's first", function () {
    const log = parseWriterLog(logOf(run("a", "w1", 0, 10), run("b", "w2", 950, 10)));
    expect(log.records).to.have.length(20);
    expect(twoWriterOverlaps(log)).to.deep.equal([]);
  });

  it("tolerates a hand-over whose clocks disagree by less than the skew tolerance, not by more", function () {
    // b's node runs 50 ms behind: its first record (appended after a's last) reads 40 ms earlier.
    const skewed = logOf(run("a", "w1", 0, 10)) + logOf(run("b", "w2", 860, 10));
    expect(twoWriterOverlaps(parseWriterLog(skewed))).to.deep.equal([]);
    const [overlap] = twoWriterOverlaps(parseWriterLog(skewed), { skewToleranceMs: 20 });
    expect(overlap?.evidence).to.equal("wall-clock");
    expect([overlap?.startMs, overlap?.endMs]).to.deep.equal([ms(860), ms(900)]);
  });

  it("ignores a torn last line and says so; a damaged line inside the log is reported as corrupt", function () {
    const whole = logOf(run("a", "w1", 0, 5));
    const torn = parseWriterLog(`${whole}{"podUid":"a","node":"w1","pi`);
    expect(torn.records).to.have.length(5);
    expect(torn.tornLastLine).to.deep.equal({ line: 6, text: '{"podUid":"a","node":"w1","pi' });
    expect(torn.corrupt).to.deep.equal([]);
    expect(twoWriterOverlaps(torn)).to.deep.equal([]);

    const damaged = parseWriterLog(`${line("a", "w1", 0, 0)}garbage\n${line("a", "w1", 1, 100)}`);
    expect(damaged.records.map((r) => r.seq)).to.deep.equal([0, 1]);
    expect(damaged.corrupt).to.deep.equal([{ line: 2, text: "garbage" }]);
    expect(damaged.tornLastLine).to.equal(undefined);
  });

  it("sees one writer across a gap in its records, and two when another wrote in the gap and it came back", function () {
    // a pauses from 500 to 3000 ms (a partition that heals): alone, that is still one writer.
    const alone = parseWriterLog(logOf(run("a", "w1", 0, 5), run("a", "w1", 3000, 5)));
    expect(twoWriterOverlaps(alone)).to.deep.equal([]);
    // b writes in a's gap and stops; a resumes after it: a was never stopped, two writers.
    const both = parseWriterLog(
      logOf(run("a", "w1", 0, 5), run("b", "w2", 1000, 5), run("a", "w1", 3000, 5)),
    );
    expect(twoWriterOverlaps(both)).to.deep.equal([
      {
        writers: [
          { podUid: "a", node: "w1", records: 0 },
          { podUid: "b", node: "w2", records: 5 },
        ],
        startMs: ms(1000),
        endMs: ms(1400),
        evidence: "interleaved",
      },
    ]);
  });

  it("keeps a restarted container (same pod, same node) one writer and reports every overlapping pair", function () {
    const restarted = parseWriterLog(logOf(run("a", "w1", 0, 5), run("a", "w1", 600, 5)));
    expect(twoWriterOverlaps(restarted)).to.deep.equal([]);
    const three = parseWriterLog(
      logOf(run("a", "w1", 0, 10), run("b", "w2", 250, 10), run("c", "w3", 500, 10)),
    );
    const pairs = twoWriterOverlaps(three).map((o) => o.writers.map((w) => w.podUid).join("+"));
    expect(pairs).to.deep.equal(["a+b", "a+c", "b+c"]);
  });
});
