import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";

interface Step {
  name?: string;
  id?: string;
  if?: string;
  run?: string;
}

const PINNED = "bench/baselines/kind-fast.summary.json";

describe("the nightly's comparisons (e2e-kind workflow)", function () {
  const workflow = parse(
    readFileSync(join(PROJECT_ROOT, ".github", "workflows", "e2e-kind.yml"), "utf8"),
  ) as {
    jobs: Record<string, { steps: Step[] }>;
  };
  const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
  const pinned = steps.find((s) => s.name === "Compare with the pinned release baseline");

  /** Runs the pinned step's script in a fresh directory, with an `npx` that records its arguments. */
  function runPinnedStep(withBaseline: boolean): { status: number | null; stdout: string; npx: string } {
    const dir = mkdtempSync(join(tmpdir(), "rekindle-workflow-"));
    const bin = join(dir, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "npx"), `#!/bin/sh\necho "$@" > "${join(dir, "npx-args")}"\n`);
    chmodSync(join(bin, "npx"), 0o755);
    writeFileSync(join(dir, "npx-args"), "");
    if (withBaseline) {
      mkdirSync(join(dir, "bench", "baselines"), { recursive: true });
      writeFileSync(join(dir, PINNED), "{}");
    }
    const result = spawnSync("bash", ["-e", "-c", pinned?.run ?? "exit 99"], {
      cwd: dir,
      env: { ...process.env, PATH: `${bin}:${process.env["PATH"] ?? ""}` },
      encoding: "utf8",
    });
    return {
      status: result.status,
      stdout: result.stdout,
      npx: readFileSync(join(dir, "npx-args"), "utf8").trim(),
    };
  }

  it("still compares with the last nightly", function () {
    const last = steps.find(
      (s) => s.run?.includes("rekindle compare reports/baseline/summary.json") === true,
    );
    expect(last?.run).to.include("reports/e2e/summary.json").and.include("--max-regression 20%");
  });

  it("also compares with the pinned release baseline, after the run passed, whatever the other comparison said", function () {
    expect(pinned?.if).to.include("!cancelled()").and.include("steps.run.outcome == 'success'");
    expect(steps.find((s) => s.id === "run")?.run).to.include("rekindle run");
    const { status, npx } = runPinnedStep(true);
    expect(status).to.equal(0);
    expect(npx).to.equal(`rekindle compare ${PINNED} reports/e2e/summary.json --max-regression 20%`);
  });

  it("skips with the reason printed while no baseline is pinned", function () {
    const { status, stdout, npx } = runPinnedStep(false);
    expect(status).to.equal(0);
    expect(stdout)
      .to.include(`no pinned release baseline at ${PINNED}: skipping`)
      .and.include("bench/baselines/README.md");
    expect(npx).to.equal("");
  });

  it("the next nightly baseline is saved only from a night whose comparisons passed", function () {
    const save = steps.findIndex((s) => s.name === "Make this nightly the next baseline");
    expect(save).to.be.greaterThan(steps.indexOf(pinned ?? {}));
    expect(steps[save]?.if).to.equal("github.event_name == 'schedule'");
  });
});
