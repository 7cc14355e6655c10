// The calibration's method (issue 23 item 3): pooling only runs of one build, medians with ranges,
// the flagged count up front and per scenario, the excuse count, and raw summaries that read back.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { renderCalibrationPage } from "../../bench/calibration-page.js";
import { buildOf, poolRuns, type CalibrationInput } from "../../bench/calibration-pool.js";
import { trimSummary } from "../../bench/calibration-raw.js";
import {
  calibrationRows,
  excuses,
  flagsByScenario,
  shortOfRuns,
  spreadOf,
} from "../../bench/calibration-rows.js";
import { RekindleError } from "../../lib/errors.js";
import { readSummary } from "../../lib/report/summary-file.js";
import { summarizeScenario, type RunSummary, type ScenarioRun } from "../../lib/report/summary.js";
import type { RunEnvironment } from "../../lib/report/environment.js";
import { rekindleThrow } from "../support/assertions.js";

const SHA_A = "a".repeat(40);
const SHA_B = "b".repeat(40);

function run(times: Record<string, number>, explained?: string[]): ScenarioRun {
  return {
    outcome: "passed",
    recoveryMs: times["deployment:recovered"] ?? null,
    milestones: Object.entries(times).map(([name, atMs]) => ({ name, atMs })),
    ...(explained ? { explained } : {}),
  };
}

function summary(
  provider: string,
  runs: ScenarioRun[],
  options: {
    sha?: string | null;
    dirty?: boolean;
    profile?: string;
    expected?: string[];
    runId?: string;
  } = {},
): RunSummary {
  const expected = (options.expected ?? ["node-ready-unknown"]).map((name) => ({
    name,
    minMs: 0,
    maxMs: 1_000,
  }));
  return {
    schemaVersion: 2,
    runId: options.runId ?? `${provider}-run`,
    provider,
    profile: options.profile ?? "fast",
    startedAt: "2026-11-24T00:00:00Z",
    repeat: runs.length,
    scenarios: [summarizeScenario("node-loss/baseline", runs, expected)],
    environment: {
      rekindle: {
        version: "0.1.0",
        gitSha: options.sha === undefined ? SHA_A : options.sha,
        gitDirty: options.dirty ?? false,
      },
    } as RunEnvironment,
    error: null,
  };
}

const input = (file: string, s: RunSummary): CalibrationInput => ({ file, summary: s });

describe("calibration method", function () {
  describe("spreadOf", function () {
    it("takes the middle value of an odd count and the mean of the two middles of an even one", function () {
      expect(spreadOf([5, 1, 3])).to.deep.equal({ n: 3, p50: 3, min: 1, max: 5 });
      // Six runs: the old nearest-rank p50 was the 3rd value (3); the median is (3 + 4) / 2.
      expect(spreadOf([6, 1, 4, 2, 5, 3])).to.deep.equal({ n: 6, p50: 3.5, min: 1, max: 6 });
    });
  });

  describe("poolRuns", function () {
    it("pools runs of one clean build across files", function () {
      const pooled = poolRuns(
        [
          input("a.json", summary("sim", [run({ "node-ready-unknown": 1 })], { runId: "r1" })),
          input("b.json", summary("sim", [run({ "node-ready-unknown": 2 })], { runId: "r2" })),
        ],
        "sim",
      );
      expect(pooled.runIds).to.deep.equal(["r1", "r2"]);
      expect(pooled.shas).to.deep.equal([SHA_A]);
      expect(pooled.scenarios[0]?.runs).to.have.length(2);
    });

    it("refuses runs of two builds, naming the file and both shas, unless both are listed", function () {
      const files = [
        input("a.json", summary("sim", [run({ "node-ready-unknown": 1 })])),
        input("b.json", summary("sim", [run({ "node-ready-unknown": 2 })], { sha: SHA_B })),
      ];
      const error = rekindleThrow(() => poolRuns(files, "sim"));
      expect(error.code).to.equal("INVALID_INPUT");
      expect(error.message).to.include("b.json").and.include(SHA_B).and.include(SHA_A);
      expect(error.hint).to.include("--pool-shas");
      expect(
        rekindleThrow(() => poolRuns(files, "sim", { poolShas: [SHA_A.slice(0, 7)] })).message,
      ).to.include("b.json");
      expect(
        poolRuns(files, "sim", { poolShas: [SHA_A.slice(0, 7), SHA_B.slice(0, 12)] }).shas,
      ).to.deep.equal([SHA_A, SHA_B]);
      // A prefix shorter than 7 digits lists nothing.
      expect(() => poolRuns(files, "sim", { poolShas: ["aaaa", "bbbb"] })).to.throw(RekindleError);
    });

    it("counts a dirty tree or a missing sha as unrecorded, which pools with others only when listed", function () {
      expect(buildOf(summary("sim", [], { dirty: true }))).to.equal("unrecorded");
      expect(buildOf(summary("sim", [], { sha: null }))).to.equal("unrecorded");
      const files = [
        input("clean.json", summary("sim", [run({ "node-ready-unknown": 1 })])),
        input("dirty.json", summary("sim", [run({ "node-ready-unknown": 2 })], { dirty: true })),
      ];
      expect(rekindleThrow(() => poolRuns(files, "sim")).message)
        .to.include("dirty.json")
        .and.include("unrecorded");
      expect(poolRuns(files, "sim", { poolShas: [SHA_A, "unrecorded"] }).scenarios[0]?.runs).to.have.length(
        2,
      );
    });

    it("refuses another provider, another profile, and a scenario whose expectations changed", function () {
      expect(rekindleThrow(() => poolRuns([input("k.json", summary("kind", []))], "sim")).message).to.include(
        "k.json: a kind run, given as sim",
      );
      const profiles = [
        input("a.json", summary("sim", [])),
        input("d.json", summary("sim", [], { profile: "default" })),
      ];
      expect(rekindleThrow(() => poolRuns(profiles, "sim")).message).to.include("d.json: profile default");
      const changed = [
        input("a.json", summary("sim", [])),
        input("c.json", summary("sim", [], { expected: ["node-ready-unknown", "taint-added:x"] })),
      ];
      expect(rekindleThrow(() => poolRuns(changed, "sim")).message).to.include(
        "c.json: scenario node-loss/baseline expects other milestones",
      );
      expect(rekindleThrow(() => poolRuns([], "sim")).message).to.include("no sim summaries");
    });

    it("leaves out a scenario's runs of one named run, and refuses a scenario that run does not have", function () {
      const files = [
        input("old.json", summary("sim", [run({ "node-ready-unknown": 9 })], { runId: "old" })),
        input("new.json", summary("sim", [run({ "node-ready-unknown": 1 })], { runId: "new", sha: SHA_B })),
      ];
      const pooled = poolRuns(files, "sim", {
        poolShas: [SHA_A, SHA_B],
        exclude: ["node-loss/baseline@old"],
      });
      expect(pooled.scenarios[0]?.runs.map((r) => r.milestones[0]?.atMs)).to.deep.equal([1]);
      expect(pooled.excluded).to.deep.equal(["node-loss/baseline@old"]);
      expect(
        rekindleThrow(() =>
          poolRuns(files, "sim", { poolShas: [SHA_A, SHA_B], exclude: ["node-loss/typo@old"] }),
        ).message,
      ).to.include("--exclude node-loss/typo@old");
      // Another provider's run id is that provider's to check.
      expect(
        poolRuns(files, "sim", { poolShas: [SHA_A, SHA_B], exclude: ["x@kind-run"] }).excluded,
      ).to.deep.equal([]);
    });
  });

  describe("rows, flags and the page", function () {
    const sim = poolRuns(
      [
        input(
          "sim.json",
          summary("sim", [
            run({ "node-ready-unknown": 9_000, "deployment:recovered": 15_000 }),
            run({ "node-ready-unknown": 9_400, "deployment:recovered": 15_500 }, [
              "deployment:recovered: kubelet-retry",
            ]),
          ]),
        ),
      ],
      "sim",
    );
    const kind = poolRuns(
      [
        input(
          "kind.json",
          summary("kind", [
            run({ "node-ready-unknown": 9_600, "deployment:recovered": 18_000, "scenario-step": 1 }),
            run({ "node-ready-unknown": 9_800, "deployment:recovered": 18_400 }),
          ]),
        ),
      ],
      "kind",
    );
    const rows = calibrationRows(sim, kind);
    const flags = flagsByScenario(rows, sim, kind);

    it("compares the median of each kubelet, control-plane and controller milestone, with its range", function () {
      expect(rows.map((r) => r.milestone)).to.deep.equal(["node-ready-unknown", "deployment:recovered"]);
      expect(rows[0]).to.deep.include({ flagged: false, sim: { n: 2, p50: 9_200, min: 9_000, max: 9_400 } });
      // 15.25 s against 18.2 s: 2.95 s apart, above max(1 s, 1.82 s).
      expect(rows[1]).to.deep.include({
        flagged: true,
        kind: { n: 2, p50: 18_200, min: 18_000, max: 18_400 },
      });
    });

    it("counts flagged rows per scenario, runs short of the minimum, and excused runs", function () {
      expect(flags).to.deep.equal([
        { scenario: "node-loss/baseline", runs: { sim: 2, kind: 2 }, rows: 2, flagged: 1 },
      ]);
      expect(shortOfRuns(flags, 5).map((f) => f.scenario)).to.deep.equal(["node-loss/baseline"]);
      expect(shortOfRuns(flags, 2)).to.deep.equal([]);
      expect(excuses(sim)).to.deep.equal({ runs: 2, excused: 1 });
      expect(excuses(kind)).to.deep.equal({ runs: 2, excused: 0 });
    });

    it("states the flagged count first, then per scenario, then each row's median and range", function () {
      const page = renderCalibrationPage({ sim, kind, rows, flags, machine: "2 cores" });
      const lines = page.split("\n");
      expect(lines[0]).to.equal(
        "**1 of 2 rows flagged (50 %).** Flagged: the medians differ by more than max(1 s, 10 % of kind's).",
      );
      expect(page).to.include("sim 1 of 2, kind 0 of 2");
      expect(page).to.include("| node-loss/baseline | 2/2 | 2 | 1 (50 %) |");
      expect(page).to.include(
        "| node-loss/baseline | `deployment:recovered` | 15.3 (15.0–15.5) | 18.2 (18.0–18.4) | −3.0 | **yes** |",
      );
      expect(page).to.include("build `aaaaaaaaaaaa`");
      expect(page).not.to.include("Left out");
      const leftOut = renderCalibrationPage({
        sim: { ...sim, excluded: ["node-pressure/memory@r0"] },
        kind,
        rows,
        flags,
        machine: "2 cores",
      });
      expect(leftOut).to.include(
        "Left out (runs superseded by a later change to their mechanism): `node-pressure/memory@r0`.",
      );
    });
  });

  describe("trimmed raw summaries", function () {
    it("keep what the calibration reads, and read back as summaries giving the same rows", function () {
      const dir = mkdtempSync(join(tmpdir(), "rekindle-calibration-"));
      try {
        const full = summary("kind", [
          run({ "node-ready-unknown": 9_600 }, ["x"]),
          run({ "node-ready-unknown": 9_900 }),
        ]);
        const file = join(dir, "kind.json");
        writeFileSync(file, JSON.stringify(trimSummary(full)));
        const back = readSummary(file);
        const simSide = poolRuns([input("s", summary("sim", [run({ "node-ready-unknown": 9_000 })]))], "sim");
        const fromFull = calibrationRows(simSide, poolRuns([input("f", full)], "kind"));
        const fromTrimmed = calibrationRows(simSide, poolRuns([input(file, back)], "kind"));
        expect(fromTrimmed).to.deep.equal(fromFull);
        expect(excuses(poolRuns([input(file, back)], "kind")).excused).to.equal(1);
        expect(back.environment?.rekindle.gitSha).to.equal(SHA_A);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
