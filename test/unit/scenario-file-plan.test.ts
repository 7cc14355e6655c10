// What `rekindle run -f` and `list -f` settle before any cluster: the profile with the file's
// knobs, one cluster for all files, the command line agreeing with the files, what a provider
// cannot do refused (exit 2), and the windows `list -f` prints from the examples' own workloads.
import { expect } from "chai";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { rekindleThrow } from "../support/assertions.js";
import { scenarioFromText } from "../../lib/scenario-file/load.js";
import { checkProvider, planScenarioFiles } from "../../lib/scenario-file/plan.js";
import { withKnobs } from "../../lib/scenario-file/profile.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { cli } from "../support/cli-capture.js";

const EXAMPLES = join(PROJECT_ROOT, "examples");
const example = (name: string) => join(EXAMPLES, name, "scenario.yaml");

const thrown = rekindleThrow;

describe("scenario files: the run's plan", function () {
  it("applies the file's knobs over the profile, in whole seconds where the flags take seconds", function () {
    const p = withKnobs(TIMING_PROFILES.fast, {
      nodeMonitorGracePeriodMs: 20_000,
      defaultUnreachableTolerationMs: 30_000,
      shutdownGracePeriodMs: 45_000,
    });
    expect(p.nodeMonitorGracePeriodSeconds).to.equal(20);
    expect(p.defaultUnreachableTolerationSeconds).to.equal(30);
    expect(p.defaultNotReadyTolerationSeconds).to.equal(
      TIMING_PROFILES.fast.defaultNotReadyTolerationSeconds,
    );
    expect(p.simKubelet.shutdownGracePeriodMs).to.equal(45_000);
    expect(TIMING_PROFILES.fast.simKubelet.shutdownGracePeriodMs, "the profile itself is untouched").to.equal(
      30_000,
    );
    expect(
      thrown(() => withKnobs(TIMING_PROFILES.fast, { nodeMonitorGracePeriodMs: 1500 })).message,
    ).to.include("not a whole number of seconds");
    expect(
      thrown(() => withKnobs(TIMING_PROFILES.fast, { nodeMonitorGracePeriodMs: 2000 })).message,
    ).to.include("every node would flap NotReady");
  });

  it("runs several files on one cluster when their clusters agree once the default shape is filled in", function () {
    const plan = planScenarioFiles([example("zone-outage-spread"), example("database-pdb-controller")], {
      profile: "fast",
      repeat: 2,
    });
    expect(plan.files.map((f) => f.name)).to.deep.equal(["zone-outage-spread", "database-pdb-controller"]);
    expect(plan.profile.name).to.equal("fast");
    expect([...plan.repeats.values()]).to.deep.equal([2, 2]);
    expect(plan.provider).to.equal(undefined);
  });

  it("refuses a --profile or --provider that contradicts the file's, naming both", function () {
    // a-database.yaml names provider kind and profile fast.
    const file = join(PROJECT_ROOT, "test", "fixtures", "scenario-files", "valid", "a-database.yaml");
    const profile = thrown(() => planScenarioFiles([file], { profile: "default" }));
    expect(profile.code).to.equal("INVALID_INPUT");
    expect(profile.message).to.include("--profile default contradicts");
    expect(profile.message).to.include("spec.cluster.profile fast");
    const provider = thrown(() => planScenarioFiles([file], { provider: "sim" }));
    expect(provider.message).to.include("--provider sim contradicts");
    // Agreeing flags pass the comparison; kind then refuses what its kubelets read from their own
    // config, but not the file's probe (kind runs probes).
    const agreeing = thrown(() => planScenarioFiles([file], { provider: "kind", profile: "fast" })).message;
    expect(agreeing).to.include("the kind provider cannot run this");
    expect(agreeing).to.not.include("has a probe");
  });

  it("refuses what the chosen provider cannot do, before anything starts", function () {
    const plan = planScenarioFiles([example("deployment-toleration-30s")]);
    const file = plan.files[0];
    if (file === undefined) throw new Error("no file");
    expect(() => {
      checkProvider([file], "sim");
    }).to.not.throw();
    const existing = thrown(() => {
      checkProvider([file], "existing");
    });
    expect(existing.code).to.equal("INVALID_INPUT");
    expect(existing.message).to.include("the existing provider cannot run this");
    const probed = {
      ...file,
      workloads: file.workloads.map((w) => ({ ...w, probe: { kind: "tcp" as const, port: 80 } })),
    };
    expect(() => {
      checkProvider([probed], "kind");
    }).to.not.throw();
    expect(
      thrown(() => {
        checkProvider([probed], "sim");
      }).message,
    ).to.include("workload web has a probe: the sim's pods run no containers");
    // A kubelet knob is the sim's to apply; kind's kubelet reads it from its own config.
    const kubeletKnob = { ...file, cluster: { knobs: { shutdownGracePeriodMs: 45_000 } } };
    expect(() => {
      checkProvider([kubeletKnob], "sim");
    }).to.not.throw();
    expect(
      thrown(() => {
        checkProvider([kubeletKnob], "kind");
      }).message,
    ).to.include("spec.cluster.knobs.shutdownGracePeriod: on kind the kubelet reads it from its own config");
  });
});

describe("the HTTP probe example on the sim", function () {
  it("is refused before anything starts, exit 2, naming the probe and why the sim cannot answer it", async function () {
    const file = example("http-probe-kind");
    const planned = thrown(() => planScenarioFiles([file], { provider: "sim" }));
    expect(planned.code).to.equal("INVALID_INPUT");
    expect(planned.message).to.include(`${file}: workload web has a probe: the sim's pods run no containers`);
    const result = await cli(["run", "--provider", "sim", "--profile", "fast", "-f", file]);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include("the sim provider cannot run this");
    expect(result.stderr).to.include("there is no in-cluster place to probe from; use provider kind");
  });

  it("lists its probe's windows: failing at the fault, answering once the Service serves", async function () {
    const result = await cli(["list", "--profile", "fast", "-f", example("http-probe-kind")]);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.match(/web:probe-failing\s+0s–/);
    expect(result.stdout).to.include(
      "kube-proxy on the prober's node routes Service web to the Ready replacement",
    );
  });
});

describe("scenario files: eviction thresholds (knobs.evictionHard)", function () {
  const text = (hard: string) => `apiVersion: rekindle.dev/v1alpha1
kind: Scenario
metadata: { name: thresholds }
spec:
  cluster:
    knobs:
      evictionHard: ${hard}
  workloads:
    - { name: web, manifests: [./web.yaml] }
  fault: { type: memory-pressure, target: { workload: web }, duration: 20s }
`;
  const load = (hard: string) =>
    scenarioFromText(text(hard), join(EXAMPLES, "deployment-toleration-30s", "thresholds.yaml"));

  it("are read by kubelet signal name, and checked as quantities or percentages", function () {
    const loaded = load('{ memoryAvailable: "100Mi", nodefsAvailable: "10%" }');
    if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join("; "));
    expect(loaded.file.cluster.knobs?.evictionHard).to.deep.equal({
      "memory.available": "100Mi",
      "nodefs.available": "10%",
    });
    const bad = load('{ memoryAvailable: "lots" }');
    expect(bad.ok).to.equal(false);
    if (!bad.ok)
      expect(bad.problems.map((p) => p.message).join("; ")).to.include(
        "expected a quantity such as 200Mi or 1Gi, or a percentage such as 10%",
      );
    expect(load('{ imagefsAvailable: "15%" }').ok, "a signal rekindle's faults do not use").to.equal(false);
  });

  it("are refused on every provider, each with its reason, rather than faked", function () {
    const loaded = load('{ memoryAvailable: "100Mi" }');
    if (!loaded.ok) throw new Error("did not load");
    const refusal = (provider: "sim" | "kind" | "existing") =>
      thrown(() => {
        checkProvider([loaded.file], provider);
      });
    const sim = refusal("sim");
    expect(sim.code).to.equal("INVALID_INPUT");
    expect(sim.message).to.include("spec.cluster.knobs.evictionHard: the sim's pressure has no thresholds");
    expect(refusal("kind").message).to.include(
      "set evictionHard in the KubeletConfiguration patch of a kind config (spec.cluster.kindConfig)",
    );
    expect(refusal("existing").message).to.include("the kubelets keep their own evictionHard");
  });
});

describe("rekindle list -f", function () {
  it("prints each workload's windows from its own spec: the 30 s toleration moves the eviction", async function () {
    const result = await cli([
      "list",
      "--profile",
      "fast",
      "-f",
      join(EXAMPLES, "deployment-toleration-30s"),
    ]);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.include("file/deployment-toleration-30s");
    expect(result.stdout).to.match(/web:pod-deletion-requested\s+32s–/);
    expect(result.stdout).to.include("its unreachable toleration (tolerationSeconds 30)");
  });

  it("keys volume milestones by workload and lists -o json", async function () {
    const result = await cli([
      "list",
      "--profile",
      "fast",
      "-o",
      "json",
      "-f",
      example("node-loss-fixtures"),
    ]);
    expect(result.code, result.stderr).to.equal(0);
    const listed = JSON.parse(result.stdout) as {
      scenarios: { id: string; milestones: { name: string }[] }[];
    };
    const names = listed.scenarios[0]?.milestones.map((m) => m.name) ?? [];
    expect(names).to.include.members(["db:va-gone", "db:recovered", "cache:recovered", "web:recovered"]);
    expect(names).to.not.include("va-gone");
  });

  it("prints a node-local workload's reason, and names the budgets that cannot be met", async function () {
    const dir = mkdtempSync(join(tmpdir(), "rekindle-node-local-"));
    const manifests = join(EXAMPLES, "local-volume-partition");
    const file = join(dir, "stopped.yaml");
    writeFileSync(
      file,
      `apiVersion: rekindle.dev/v1alpha1
kind: Scenario
metadata: { name: stopped }
spec:
  workloads:
    - { name: journal, manifests: [${join(manifests, "storage.yaml")}, ${join(manifests, "db.yaml")}] }
  fault: { type: stop, target: { workload: journal } }
  controller: { enabled: true }
  budgets:
    - { workload: journal, recoveredWithin: 60s }
`,
    );
    const result = await cli(["list", "--profile", "fast", "-f", file]);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.include(
      "note: budgets that cannot be met, reported missed when run: journal recovered within 60 s: the model expects journal:recovered never",
    );
    expect(result.stdout).to.match(/journal:recovered\s+never\s+its volume stays on the lost node/);
    expect(result.stdout).to.include("a stop fault has no start");
  });

  it("exits 2 on a bad file, naming file:line:column", async function () {
    const bad = join(PROJECT_ROOT, "test", "fixtures", "scenario-files", "invalid");
    const result = await cli(["list", "-f", bad]);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.match(/\.yaml:\d+:\d+: /);
  });
});
