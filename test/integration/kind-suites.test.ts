// The suite families on a real kind cluster: real kubelets in kind node containers, booted from
// rekindle's offline node image (built here from Debian packages and Go modules, then cached), 1
// control plane and 3 workers in 2 zones, the fast profile. One `rekindle run` as a user types it,
// then a check that nothing is left: no cluster, no node containers, the host's inotify limits as
// they were.
import { expect } from "chai";
import { execa } from "execa";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { probeEngine } from "../../lib/cluster/kind/engine.js";
import { INOTIFY_MINIMUMS } from "../../lib/cluster/kind/host-settings.js";
import { ensureNodeImage } from "../../lib/cluster/kind/image/build.js";
import { ensureControllerImage } from "../../lib/cluster/kind/image/controller-image.js";
import { ensureKindBinary } from "../../lib/build/kind-binary.js";
import type { RunSummary } from "../../lib/report/summary.js";
import { findOnPath } from "../../lib/util/paths.js";
import { consoleProgress } from "../../lib/util/progress.js";
import { KIND_CI_SCENARIO_PATTERN, KIND_CI_SCENARIOS, KIND_CI_SUITES } from "../support/kind-ci-scenarios.js";
import { HINT, requirePrerequisite } from "../support/prerequisites.js";
import { REKINDLE_BIN } from "../support/rekindle-run.js";
import { testRunDir } from "../support/run-dir.js";

const CLUSTER = "rekindle-it-kind";
const SCENARIOS = KIND_CI_SCENARIOS;
const SUITES = KIND_CI_SUITES;

async function kindMissing(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return `building the offline node image needs root; ${HINT}`;
  if (findOnPath("mmdebstrap") === undefined) return `no mmdebstrap (Debian package); ${HINT}`;
  const engine = await probeEngine();
  if (engine !== "ok") return `no container engine runs privileged containers (${engine}); ${HINT}`;
  return undefined;
}

function inotifyLimits(): Record<string, string> {
  return Object.fromEntries(
    Object.keys(INOTIFY_MINIMUMS).map((name) => [
      name,
      readFileSync(`/proc/sys/${name.replaceAll(".", "/")}`, "utf8").trim(),
    ]),
  );
}

describe("the suite families on a real kind cluster (offline node image, fast profile)", function () {
  let kind: string;

  before(async function () {
    // A cold machine builds the kind CLI and the node image's parts first (minutes; cached after).
    this.timeout(45 * 60_000);
    requirePrerequisite(this, await kindMissing());
    kind = await ensureKindBinary();
    await ensureNodeImage({ progress: consoleProgress() });
    // The in-cluster controller's image (node-loss/controller-in-cluster would build it itself).
    await ensureControllerImage({ progress: consoleProgress() });
  });

  it("refuses an unknown --image before touching any engine, naming the valid choices", async function () {
    const result = await execa(
      process.execPath,
      [REKINDLE_BIN, "run", "--provider", "kind", "--image", "nope", "--cluster-name", CLUSTER],
      { reject: false, timeout: 60_000 },
    );
    expect(result.exitCode).to.equal(2);
    expect(result.stderr).to.include(
      'unknown --image "nope"; valid: auto, kindest, rekindle, <image reference>',
    );
  });

  it("node loss (the controller in-process and in-cluster), partition, zone outage, controller failover, graceful shutdown and node pressure (the real eviction manager) pass; the cluster and host settings are gone after", async function () {
    this.timeout(40 * 60_000);
    const reportDir = testRunDir("kind-suites");
    const before = inotifyLimits();
    const result = await execa(
      process.execPath,
      [
        REKINDLE_BIN,
        "run",
        "--provider",
        "kind",
        "--image",
        "rekindle",
        "--profile",
        "fast",
        ...SUITES.flatMap((suite) => ["--suite", suite]),
        "--scenario",
        KIND_CI_SCENARIO_PATTERN,
        "--cluster-name",
        CLUSTER,
        "--report-dir",
        reportDir,
        "--no-html",
      ],
      { reject: false, timeout: 35 * 60_000, all: true },
    );
    if (result.exitCode !== 0) console.log(result.all);
    expect(result.exitCode, "rekindle run exit code").to.equal(0);
    const summary = JSON.parse(readFileSync(join(reportDir, "summary.json"), "utf8")) as RunSummary;
    expect(summary.provider).to.equal("kind");
    expect(summary.scenarios.map((s) => [s.id, s.outcome])).to.deep.equal(
      SCENARIOS.map((id) => [id, "passed"]),
    );
    // The baseline's StatefulSet with a volume never comes back by itself; the other node losses do.
    expect(summary.scenarios.slice(0, 4).map((s) => s.recoveryMs === null)).to.deep.equal([
      true,
      false,
      false,
      false,
    ]);

    const clusters = await execa(kind, ["get", "clusters"], { reject: false });
    expect(clusters.stdout.split("\n")).not.to.include(CLUSTER);
    const containers = await execa("docker", [
      "ps",
      "-aq",
      "--filter",
      `label=io.x-k8s.kind.cluster=${CLUSTER}`,
    ]);
    expect(containers.stdout.trim(), "node containers left").to.equal("");
    expect(inotifyLimits()).to.deep.equal(before);
  });
});
