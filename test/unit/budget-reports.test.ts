// Budgets from a run to the reports: a missed budget fails the scenario with its line (beside a
// window mismatch), the harness hands budgets() the judged run, repeats fold into one row per
// budget, and summary.json, the end-of-run lines, JUnit and the sign-off pages show them.
import { expect } from "chai";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { runResultText } from "../../lib/cli/run-result.js";
import { BUDGET_KINDS, type BudgetResult } from "../../lib/expect/budgets.js";
import { junitXml } from "../../lib/report/junit.js";
import { writeSignoff } from "../../lib/report/signoff.js";
import {
  summarizeScenario,
  SUMMARY_SCHEMA_VERSION,
  writeSummary,
  type RunSummary,
  type ScenarioRun,
} from "../../lib/report/summary.js";
import { runEnvironment } from "../../lib/report/environment.js";
import type { TimelineRecorder } from "../../lib/observe/recorder.js";
import { TransitionLog } from "../../lib/observe/transition-log.js";
import type { Transition } from "../../lib/observe/types.js";
import { type BudgetContext, type ScenarioDefinition } from "../../lib/scenario/harness.js";
import { scenarioBudgets } from "../../lib/scenario/scenario-budgets.js";
import { ScenarioTimeline } from "../../lib/scenario/scenario-timeline.js";
import { concludeScenario, verdictError } from "../../lib/scenario/verdict.js";
import { SUMMARY_SCHEMA_PATH, summarySchemaErrors } from "../support/summary-schema.js";
import { fastTimelineInputs } from "../support/timeline-inputs.js";

const recoveredIn = (ms: number | null, passed: boolean): BudgetResult => ({
  workload: "db",
  budget: "recoveredWithin",
  limit: "45 s",
  measured: ms === null ? "not recovered" : `${(ms / 1000).toFixed(1)} s`,
  passed,
  value: ms,
});

const neverEvicted = (atMs: number | null): BudgetResult => ({
  workload: "db",
  budget: "neverEvicted",
  limit: "never",
  measured: atMs === null ? "never" : `db-0 evicted at ${(atMs / 1000).toFixed(1)} s`,
  passed: atMs === null,
  value: atMs,
});

const run = (budgets: BudgetResult[] | undefined, error?: string): ScenarioRun => ({
  outcome: error === undefined ? "passed" : "failed",
  recoveryMs: 30_000,
  milestones: [
    { name: "fault-injected", atMs: 0 },
    { name: "db:recovered", atMs: 30_000 },
  ],
  ...(error !== undefined ? { error } : {}),
  ...(budgets !== undefined ? { budgets } : {}),
});

describe("a scenario's verdict with budgets", function () {
  const expected = [
    { name: "db:recovered", after: "fault-injected", minMs: 0, maxMs: 60_000, why: "the model says so" },
  ];
  const milestones = [
    { name: "fault-injected", atMs: 0 },
    { name: "db:recovered", atMs: 52_300 },
  ];

  it("a missed budget fails a run whose windows all held, with its own line", async function () {
    const verdict = await concludeScenario({
      title: "file/db-node-loss",
      subtitle: "sim",
      expected,
      milestones,
      failure: undefined,
      recoveryOf: ["db"],
      budgets: [recoveredIn(52_300, false), neverEvicted(null)],
    });
    expect(verdict.outcome).to.equal("failed");
    expect(verdict.error).to.equal("budget missed: db recovered within 45 s — measured 52.3 s");
    expect(verdict.budgets).to.have.length(2);
  });

  it("met budgets leave a passing run passing, and are kept on it", async function () {
    const verdict = await concludeScenario({
      title: "file/db-node-loss",
      subtitle: "sim",
      expected,
      milestones: [milestones[0]!, { name: "db:recovered", atMs: 30_000 }],
      failure: undefined,
      recoveryOf: ["db"],
      budgets: [recoveredIn(30_000, true)],
    });
    expect(verdict.outcome).to.equal("passed");
    expect(verdict.error).to.equal(undefined);
    expect(verdict.budgets?.[0]?.passed).to.equal(true);
  });

  it("shows missed budgets and the window mismatch both; a step's failure alone", function () {
    const both = verdictError(
      undefined,
      [recoveredIn(52_300, false), neverEvicted(8_100)],
      "x: 1 late\ntable",
    );
    expect(both).to.equal(
      [
        "budget missed: db recovered within 45 s — measured 52.3 s",
        "budget missed: db never evicted — measured db-0 evicted at 8.1 s",
        "",
        "x: 1 late",
        "table",
      ].join("\n"),
    );
    expect(verdictError(undefined, [recoveredIn(30_000, true)], undefined)).to.equal(undefined);
    expect(verdictError(new Error("step broke"), [recoveredIn(null, false)], undefined)).to.equal(
      "step broke",
    );
  });
});

describe("the harness hands budgets() the judged run", function () {
  const inputs = fastTimelineInputs();
  const transition = (atMs: number): Transition => ({
    name: "pod-ready",
    atMs,
    subject: { kind: "Pod", namespace: "ns", name: `p${atMs}` },
    source: "watch",
  });

  function timeline(definition: ScenarioDefinition, faultAtMs: number): ScenarioTimeline {
    const t = new ScenarioTimeline(definition, "ns", inputs, undefined);
    t.faultAtMs = faultAtMs;
    t.faultNodes = ["n1"];
    const log = TransitionLog.of([transition(900), transition(1_500), transition(2_500)]);
    t.recorder = { transitions: log.all, index: log } as unknown as TimelineRecorder;
    return t;
  }

  function definition(budgets?: ScenarioDefinition["budgets"]): ScenarioDefinition {
    return {
      id: "file/x",
      title: "x",
      requires: [],
      expected: () => [],
      workloads: () => [],
      run: () => Promise.resolve(),
      ...(budgets !== undefined ? { budgets } : {}),
    };
  }

  it("the transitions up to the end of its own steps, the milestones, the fault and its nodes", function () {
    let seen: BudgetContext | undefined;
    const d = definition((context) => {
      seen = context;
      return [recoveredIn(1_000, true)];
    });
    const milestones = [{ name: "db:recovered", atMs: 1_000 }];
    const expected = [{ name: "db:recovered", after: "fault-injected", minMs: 0, maxMs: 5_000, why: "w" }];
    const checked = scenarioBudgets(d, timeline(d, 1_000), milestones, 2_000, expected);
    expect(checked).to.deep.equal({ results: [recoveredIn(1_000, true)] });
    expect(seen?.transitions.map((t) => t.atMs)).to.deep.equal([900, 1_500]);
    expect(seen).to.deep.include({
      faultAtMs: 1_000,
      faultNodes: ["n1"],
      namespace: "ns",
      milestones,
      expected,
    });
  });

  it("nothing without budgets or without a fault; what checking threw becomes the run's failure", function () {
    expect(scenarioBudgets(definition(), timeline(definition(), 1_000), [], 2_000, [])).to.deep.equal({});
    const d = definition(() => [recoveredIn(1_000, true)]);
    expect(scenarioBudgets(d, timeline(d, 0), [], 2_000, [])).to.deep.equal({});
    const broken = definition(() => {
      throw new Error("a budget names workload cache");
    });
    expect(String(scenarioBudgets(broken, timeline(broken, 1_000), [], 2_000, []).failure)).to.include(
      "cache",
    );
  });
});

describe("budgets over repeats", function () {
  it("a budget passes only if every run met it, and shows the worst run", function () {
    const s = summarizeScenario(
      "file/db",
      [
        run([recoveredIn(30_000, true), neverEvicted(null)]),
        run(
          [recoveredIn(52_300, false), neverEvicted(9_000)],
          "budget missed: db recovered within 45 s — measured 52.3 s",
        ),
        run(
          [recoveredIn(47_000, false), neverEvicted(null)],
          "budget missed: db recovered within 45 s — measured 47.0 s",
        ),
      ],
      [],
    );
    expect(s.budgets).to.deep.equal([
      { ...recoveredIn(52_300, false), missedRuns: 2 },
      { ...neverEvicted(9_000), missedRuns: 1 },
    ]);
  });

  it("a run that never came to its budgets (its fault never came) counts as missing them; no budgets, no field", function () {
    const s = summarizeScenario(
      "file/db",
      [run([recoveredIn(30_000, true)]), run(undefined, "step broke")],
      [],
    );
    expect(s.budgets).to.deep.equal([{ ...recoveredIn(30_000, true), passed: false, missedRuns: 1 }]);
    expect(summarizeScenario("file/db", [run(undefined)], [])).to.not.have.property("budgets");
  });

  it("a budget that never came is worse than any time", function () {
    const s = summarizeScenario(
      "file/db",
      [
        run([recoveredIn(52_300, false)], "x"),
        run([recoveredIn(null, false)], "y"),
        run([recoveredIn(60_000, false)], "z"),
      ],
      [],
    );
    expect(s.budgets?.[0]).to.deep.include({ measured: "not recovered", value: null, missedRuns: 3 });
  });
});

describe("budgets in the reports", function () {
  this.timeout(30_000);
  const missed = summarizeScenario(
    "file/db-node-loss",
    [
      run(
        [recoveredIn(52_300, false), { ...neverEvicted(null), workload: "<db>" }],
        "budget missed: db recovered within 45 s — measured 52.3 s",
      ),
    ],
    [{ name: "db:recovered", minMs: 0, maxMs: 60_000 }],
  );
  const stepFailed = summarizeScenario(
    "file/web",
    [run([{ ...recoveredIn(null, false), workload: "web" }], "step broke")],
    [],
  );
  let summary: RunSummary;

  before(async function () {
    summary = {
      schemaVersion: SUMMARY_SCHEMA_VERSION,
      runId: "20260101-000000-abcdef",
      provider: "sim",
      profile: "fast",
      startedAt: "2026-01-01T00:00:00.000Z",
      finishedAt: "2026-01-01T00:10:00.000Z",
      repeat: 1,
      scenarios: [missed, stepFailed],
      skipped: [],
      environment: await runEnvironment({ provider: "sim", timing: TIMING_PROFILES.fast }),
      error: null,
    };
  });

  it("summary.json with budgets validates against docs/summary.schema.json, whose kinds are the code's", function () {
    expect(summarySchemaErrors(summary)).to.deep.equal([]);
    const schema = JSON.parse(readFileSync(SUMMARY_SCHEMA_PATH, "utf8")) as {
      $defs: { budgetKind: { enum: string[] } };
    };
    expect(schema.$defs.budgetKind.enum).to.deep.equal([...BUDGET_KINDS]);
    // A budget the model expected never to be met carries its reason, per run and over the repeats.
    const never = structuredClone(summary);
    const scenario = never.scenarios[0]!;
    scenario.budgets![0]!.expectedNever = "its volume stays on the lost node";
    scenario.runs[0]!.budgets![0]!.expectedNever = "its volume stays on the lost node";
    expect(summarySchemaErrors(never)).to.deep.equal([]);
    const wrong = structuredClone(summary);
    (wrong.scenarios[0]!.budgets![0] as { budget: string }).budget = "fastEnough";
    expect(summarySchemaErrors(wrong).join("\n")).to.include("budget");
  });

  it("the end-of-run lines name each missed budget under its scenario", function () {
    const text = runResultText({ summary, reportDir: "/r", failed: 2 });
    expect(text).to.include("  FAIL  file/db-node-loss  (recovered in 30.0s; 1 of 2 budgets met)\n");
    const lines = text.split("\n");
    const at = lines.findIndex((l) => l.includes("FAIL  file/db-node-loss"));
    expect(lines[at + 1]).to.equal("        budget missed: db recovered within 45 s — measured 52.3 s");
    expect(text).to.include("        budget missed: web recovered within 45 s — measured not recovered");
  });

  it("JUnit's failure text has the missed budgets, also after a step's failure, once each", function () {
    const xml = junitXml(summary);
    const bodies = [...xml.matchAll(/<failure message="([^"]*)">([^<]*)<\/failure>/g)];
    expect(bodies.map((m) => m[1])).to.deep.equal([
      "budget missed: db recovered within 45 s — measured 52.3 s",
      "step broke",
    ]);
    expect(bodies[0]?.[2]?.match(/budget missed: db recovered within 45 s/g)).to.have.length(1);
    expect(xml).to.include("step broke\n\nbudget missed: web recovered within 45 s — measured not recovered");
  });

  it("the sign-off pages have a Budgets table per scenario, escaped", function () {
    const dir = mkdtempSync(join(tmpdir(), "rekindle-budgets-"));
    writeSummary(dir, summary);
    writeSignoff(dir, summary, new Map(), {});
    const html = readFileSync(join(dir, "signoff.html"), "utf8");
    const md = readFileSync(join(dir, "signoff.md"), "utf8");
    expect(html).to.include(
      "<h4>Budgets</h4><table><tr><th>workload</th><th>budget</th><th>limit</th><th>measured</th><th>verdict</th></tr>",
    );
    expect(html).to.include(
      '<tr><td>db</td><td>recovered within</td><td>45 s</td><td>52.3 s</td><td class="MISSED">MISSED</td></tr>',
    );
    expect(html).to.include(
      '<tr><td>&lt;db&gt;</td><td>evicted</td><td>never</td><td>never</td><td class="met">met</td></tr>',
    );
    expect(html).to.not.include("<db>");
    expect(md).to.include("#### Budgets");
    expect(md).to.include("| db | recovered within | 45 s | 52.3 s | MISSED |");
    expect(md).to.include("| &lt;db&gt; | evicted | never | never | met |");
    // The expected windows keep their own table.
    expect(md).to.include("| db:recovered | 0.0s–60.0s | 30.0s | within |");
  });

  it("over repeats the sign-off says how many runs missed it and that the measure is the worst", function () {
    const repeated = summarizeScenario(
      "file/db",
      [run([recoveredIn(30_000, true)]), run([recoveredIn(52_300, false)], "x")],
      [],
    );
    const dir = mkdtempSync(join(tmpdir(), "rekindle-budgets-"));
    const twice = { ...summary, repeat: 2, scenarios: [repeated] };
    writeSummary(dir, twice);
    writeSignoff(dir, twice, new Map(), {});
    expect(readFileSync(join(dir, "signoff.md"), "utf8")).to.include(
      "| db | recovered within | 45 s | 52.3 s (worst of 2 runs) | MISSED in 1 of 2 runs |",
    );
    expect(runResultText({ summary: twice, reportDir: "/r", failed: 1 })).to.include(
      "budget missed: db recovered within 45 s — measured 52.3 s (worst run; missed in 1 of 2)",
    );
  });
});
