import { expect } from "chai";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  carryAllureHistory,
  previousAllureHistory,
  resolveAllureHistory,
} from "../../lib/report/allure-history.js";
import { RekindleError } from "../../lib/errors.js";
import { cli } from "../support/cli-capture.js";

/** A report directory `name` under `root` whose allure-report/history holds history.json = `content`, aged `ageS` seconds. */
function runWithHistory(root: string, name: string, content: string, ageS: number): string {
  const history = join(root, name, "allure-report", "history");
  mkdirSync(history, { recursive: true });
  writeFileSync(join(history, "history.json"), content);
  writeFileSync(join(history, "history-trend.json"), `[${JSON.stringify(content)}]`);
  const at = new Date(Date.now() - ageS * 1000);
  utimesSync(history, at, at);
  return history;
}

describe("Allure history carried over between runs", function () {
  let root: string;
  beforeEach(function () {
    root = mkdtempSync(join(tmpdir(), "rekindle-allure-"));
  });

  it("finds the newest other run's allure-report/history in the same reports root", function () {
    runWithHistory(root, "20260101-000000-aaaaaa", "old", 300);
    const newest = runWithHistory(root, "20260102-000000-bbbbbb", "newer", 100);
    // A run with no Allure report (no Java then) and a stray file are passed over.
    mkdirSync(join(root, "20260103-000000-cccccc", "allure-results"), { recursive: true });
    writeFileSync(join(root, "notes.txt"), "x");
    const current = join(root, "20260104-000000-dddddd");
    mkdirSync(current);
    expect(previousAllureHistory(current)).to.equal(newest);
  });

  it("never takes the run's own history, and finds none in a fresh reports root", function () {
    const own = join(root, "only");
    runWithHistory(root, "only", "mine", 0);
    expect(previousAllureHistory(own)).to.equal(undefined);
    expect(previousAllureHistory(join(root, "missing-root", "run"))).to.equal(undefined);
  });

  it("copies the history into the new run's allure-results/history, nested files too", function () {
    const from = runWithHistory(root, "previous", "before", 10);
    mkdirSync(join(from, "nested"));
    writeFileSync(join(from, "nested", "x.json"), "{}");
    const current = join(root, "current");
    mkdirSync(join(current, "allure-results"), { recursive: true });
    const to = carryAllureHistory(from, current);
    expect(to).to.equal(join(current, "allure-results", "history"));
    expect(readFileSync(join(current, "allure-results", "history", "history.json"), "utf8")).to.equal(
      "before",
    );
    expect(existsSync(join(current, "allure-results", "history", "nested", "x.json"))).to.equal(true);
    expect(carryAllureHistory(join(root, "nowhere"), current)).to.equal(undefined);
  });

  it("--allure-history takes a report directory, its allure-report or the history itself", function () {
    const history = runWithHistory(root, "run", "h", 0);
    expect(resolveAllureHistory(join(root, "run"))).to.equal(history);
    expect(resolveAllureHistory(join(root, "run", "allure-report"))).to.equal(history);
    expect(resolveAllureHistory(history)).to.equal(history);
    expect(() => resolveAllureHistory(join(root, "nowhere"))).to.throw(
      RekindleError,
      /--allure-history .*nowhere/,
    );
  });

  it("rekindle run --allure-history naming no history exits 2 before anything starts", async function () {
    // Loading `rekindle run`'s modules (mocha, the suites) takes seconds on a busy machine.
    this.timeout(60_000);
    const reportDir = join(root, "never-written");
    const { code, stderr } = await cli([
      "run",
      "--provider",
      "sim",
      "--allure-history",
      join(root, "nowhere"),
      "--report-dir",
      reportDir,
    ]);
    expect(code).to.equal(2);
    expect(stderr).to.include("--allure-history").and.include("nowhere");
    expect(existsSync(reportDir)).to.equal(false);
  });
});
