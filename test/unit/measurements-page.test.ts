// The measurements page publishes a results file's numbers only with its command, machine, date,
// git sha and run count; a file missing any of them is listed with what it lacks, numbers withheld.
import { expect } from "chai";
import { measurementsPage, provenanceOf } from "../../lib/report/measurements.js";
import { expectIncludes } from "../support/assertions.js";

const COMPLETE = {
  command: "npx tsx bench/recovery.ts --profile fast --repeat 3",
  date: "2026-11-24",
  gitSha: "0123456789abcdef0123456789abcdef01234567",
  gitDirty: false,
  loadAverage: 2.5,
  machine: { cores: 2, memoryGiB: 24, node: "v20.20.2" },
  provider: "sim",
  profile: "fast",
  repeat: 3,
  rows: [
    {
      scenario: "node-loss/controller",
      outcome: "passed",
      runs: 3,
      deploymentRecoveredMs: { n: 3, p50: 8756, p90: 8806, max: 8806 },
      statefulSetRecoveredMs: { n: 3, p50: 10749, p90: 10846, max: 10846 },
      plainStatefulSetRecoveredMs: null,
      statefulSetNeverRecovered: 0,
    },
  ],
};

describe("measurements page", function () {
  it("publishes a complete file with its five facts and its numbers", function () {
    const page = measurementsPage([{ name: "recovery-fast-2026-11-24.json", content: COMPLETE }]);
    expectIncludes(page, [
      "1 of 1 results files published",
      "## recovery-fast-2026-11-24.json",
      "- command: `npx tsx bench/recovery.ts --profile fast --repeat 3`",
      "- machine: 2 cores, 24 GiB, Node v20.20.2",
      "- date: 2026-11-24",
      "- git sha: 0123456789abcdef0123456789abcdef01234567",
      "- runs: 3",
      "- load average at start: 2.5",
      "| node-loss/controller | passed | 3 | 8.8 s / 8.8 s | never | 10.7 s / 10.8 s |",
    ]);
    expect(page).not.to.include("Not published");
    expect(page).not.to.include("running after the attach");
  });

  it("adds where the StatefulSet + RWO volume's time went when the file records it", function () {
    const [row] = COMPLETE.rows;
    const split = {
      ...COMPLETE,
      rows: [
        {
          ...row,
          outOfServiceTaintMs: { n: 3, p50: 6100, p90: 6400, max: 6400 },
          statefulSetPodGoneMs: { n: 3, p50: 6300, p90: 6500, max: 6500 },
          statefulSetAttachedElsewhereMs: { n: 3, p50: 7200, p90: 7600, max: 7600 },
          statefulSetRunningAfterAttachMs: { n: 3, p50: 3500, p90: 8200, max: 8200 },
        },
      ],
    };
    const page = measurementsPage([{ name: "recovery-default-2026-11-26.json", content: split }]);
    expect(page).to.include(
      "| node-loss/controller | passed | 3 | 8.8 s / 8.8 s | never | 10.7 s / 10.8 s |",
    );
    expect(page).to.include(
      "| node-loss/controller | 6.1 s / 6.4 s | 6.3 s / 6.5 s | 7.2 s / 7.6 s | 3.5 s / 8.2 s |",
    );
  });

  it("withholds the numbers of a file that lacks a fact and names what it lacks", function () {
    const { gitSha: _sha, command: _command, ...partial } = COMPLETE;
    const page = measurementsPage([{ name: "recovery-fast-2026-11-22.json", content: partial }]);
    expect(page).to.include("0 of 1 results files published");
    expect(page).to.include("- `recovery-fast-2026-11-22.json`: not published: missing command, git sha");
    expect(page).not.to.include("10.7 s").and.not.include("8.8 s");
  });

  it("takes the date from the file name and the run count from repeat or runs", function () {
    const { date: _date, repeat: _repeat, ...rest } = COMPLETE;
    const dated = provenanceOf({
      name: "sim-start-2026-11-23.json",
      content: { ...rest, runs: { sim: 3, kind: 2 } },
    });
    expect(dated).to.deep.include({
      provenance: {
        command: COMPLETE.command,
        machine: "2 cores, 24 GiB, Node v20.20.2",
        date: "2026-11-23",
        gitSha: COMPLETE.gitSha,
        runs: "sim 3, kind 2",
      },
    });
    expect(provenanceOf({ name: "x.json", content: { ...rest } })).to.deep.equal({
      missing: ["date", "run count"],
    });
    expect(provenanceOf({ name: "x.json", content: "not an object" })).to.deep.equal({
      missing: ["command", "machine", "date", "git sha", "run count"],
    });
  });

  it("marks a sha measured on a dirty tree and refuses one that is not a sha", function () {
    const dirty = provenanceOf({ name: "a.json", content: { ...COMPLETE, gitDirty: true } });
    expect(dirty).to.have.nested.property("provenance.gitSha", `${COMPLETE.gitSha} (dirty tree)`);
    expect(provenanceOf({ name: "a.json", content: { ...COMPLETE, gitSha: "main" } })).to.deep.equal({
      missing: ["git sha"],
    });
  });

  it("renders a parallel run's rows: command, clusters, outcome, wall time, conditions", function () {
    const page = measurementsPage([
      {
        name: "parallel-fast-2026-11-25.json",
        content: {
          command: "rekindle run --provider sim --profile fast --parallel 2",
          machine: COMPLETE.machine,
          gitSha: COMPLETE.gitSha,
          runs: 1,
          rows: [
            {
              run: "--parallel 2",
              clusters: 2,
              outcome: "3 passed",
              totalMs: 105_000,
              conditions: "load 11",
            },
          ],
        },
      },
    ]);
    expect(page).to.include("| --parallel 2 | 2 | 3 passed | 1 min 45 s | load 11 |");
  });

  it("renders a watch-floor file per reader, and an older one's single Lease watch", function () {
    const provenance = {
      command: "npx tsx bench/watch-floor.ts",
      machine: COMPLETE.machine,
      gitSha: COMPLETE.gitSha,
      runs: 2,
    };
    const window = (cpu: number, events: number) => ({
      seconds: 60,
      eventsPerSecond: events,
      cpuPercentOfOneCore: cpu,
    });
    const page = measurementsPage([
      {
        name: "watch-floor-layers-1000w-2026-11-25.json",
        content: {
          ...provenance,
          idle: [window(0.3, 0), window(0.02, 0)],
          byReader: {
            watch: [window(1.04, 97.2), window(1.18, 97.4)],
            tls: [window(0.83, 92.6), window(0.8, 92.5)],
          },
        },
      },
      {
        name: "watch-floor-1000w-2026-11-24.json",
        content: { ...provenance, idle: [window(0.26, 0)], leaseWatch: [window(1.58, 97.22)] },
      },
    ]);
    expect(page)
      .to.include("| idle | 0.3, 0.02 | — |")
      .and.include("| watch | 1.04, 1.18 | 97.2, 97.4 |")
      .and.include("| tls | 0.83, 0.8 | 92.6, 92.5 |")
      .and.include("| watch | 1.58 | 97.22 |")
      .and.not.include("no renderer");
  });

  it("renders a whole run's wall time, machine use and its longest scenarios (bench/run-wall.ts)", function () {
    const page = measurementsPage([
      {
        name: "run-fast-parallel-5-2026-11-25.json",
        content: {
          command: "npx tsx bench/run-wall.ts --label fast-parallel-5 -- --parallel 5",
          machine: COMPLETE.machine,
          gitSha: COMPLETE.gitSha,
          runs: 1,
          wallMs: 545_000,
          outcome: "35 passed, 0 failed, 1 skipped",
          clusters: 5,
          chosenBy: "--parallel 5",
          machineCores: { mean: 0.9, peakSample: 1.95, sampleSeconds: 5 },
          memoryGiB: { before: 1.2, peak: 6.4 },
          scenarioSpanSumMs: 2_190_000,
          scenarios: [
            { id: "a/short", outcome: "passed", spanMs: 20_000 },
            { id: "a/long", outcome: "passed", spanMs: 420_000 },
            { id: "a/unseen", outcome: "passed", spanMs: null },
          ],
        },
      },
    ]);
    expect(page)
      .to.include(
        "| 9 min 5 s | 35 passed, 0 failed, 1 skipped | 5 (--parallel 5) | 0.9 / 1.95 | 1.2 / 6.4 GiB |",
      )
      .and.include("sum to 36 min 30 s; the longest: a/long 7 min 0 s; a/short 20 s.")
      .and.not.include("no renderer");
  });

  it("shows bench:recorder's phases: CPU, memory after GC, stored and counted, derivations", function () {
    const phase = (cpu: number, stored: number, counted?: number) => ({
      usage: { seconds: 60, cpuPercentOfOneCore: cpu },
      afterGc: { rssMB: 210, heapUsedMB: 60 },
      storedTransitions: stored,
      storedLeaseRenewals: 3,
      ...(counted === undefined ? {} : { countedLeaseRenewals: counted, milestoneDerivations: 4 }),
    });
    const { rows: _rows, repeat: _repeat, ...facts } = COMPLETE;
    const content = {
      ...facts,
      runs: { rest: 1, nodeLoss: 1, waiting: 1 },
      workers: 300,
      zones: 3,
      label: "before",
      beforeRecorder: { rssMB: 200, heapUsedMB: 55 },
      rest: phase(0.9, 2100, 2059),
      nodeLoss: {
        node: "worker-300",
        nodeReadyUnknownMs: 54437,
        nodeReadyAgainMs: 54498,
        ...phase(0.8, 2117),
      },
      waiting: phase(0.7, 2126, 5389),
    };
    const page = measurementsPage([{ name: "recorder-300w-large-before-2026-11-25.json", content }]);
    expect(page).to.include("300 workers in 3 zones, before code");
    expect(page).to.include("| at rest | 60 s | 0.9 % | 210 / 60 MB | 2100 (3 renewals) | 2059 | 4 |");
    expect(page).to.include(
      "| one node lost and back | 60 s | 0.8 % | 210 / 60 MB | 2117 (3 renewals) | — | — |",
    );
  });
});
