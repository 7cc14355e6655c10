// Loading scenario files (lib/scenario-file/load.ts): a valid file becomes the ScenarioFile the rest
// of rekindle reads (durations in ms, paths absolute, defaults filled in, positions of keys);
// directories load their *.yaml and *.yml files in name order; paths that are not there fail.
import { expect } from "chai";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { join, resolve } from "node:path";
import type { RekindleError } from "../../lib/errors.js";
import { rekindleThrow } from "../support/assertions.js";
import { loadScenarioFiles } from "../../lib/scenario-file/load.js";
import type { ScenarioFile } from "../../lib/scenario-file/types.js";

const DIR = "test/fixtures/scenario-files";
const VALID = join(DIR, "valid");
const FILES = resolve(VALID, "files");

function loadError(paths: readonly string[]): RekindleError {
  return rekindleThrow(() => loadScenarioFiles(paths));
}

/** A loaded file without its positions (checked on their own). */
function withoutPositions(file: ScenarioFile): Omit<ScenarioFile, "positions"> {
  const { positions: _positions, ...rest } = file;
  return rest;
}

describe("scenario files: loading", function () {
  it("loads a file using every key into the ScenarioFile: durations in ms, paths absolute", function () {
    const [file] = loadScenarioFiles([join(VALID, "a-database.yaml")]);
    expect(withoutPositions(file!)).to.deep.equal({
      path: resolve(VALID, "a-database.yaml"),
      name: "db-node-loss",
      description: "the database's node stops; the controller fences it",
      cluster: {
        provider: "kind",
        profile: "fast",
        knobs: {
          nodeMonitorGracePeriodMs: 20_000,
          nodeMonitorPeriodMs: 1_000,
          nodeLeaseDurationMs: 8_000,
          defaultNotReadyTolerationMs: 30_000,
          defaultUnreachableTolerationMs: 90_000,
          shutdownGracePeriodMs: 30_000,
          pressureTransitionPeriodMs: 500,
        },
        workers: 4,
        zones: 2,
        kindConfig: join(FILES, "kind-config.yaml"),
      },
      workloads: [
        {
          name: "db",
          source: { kind: "manifests", paths: [join(FILES, "db", "statefulset.yaml"), join(FILES, "db")] },
          service: "db",
          probe: { kind: "tcp", port: 5432 },
        },
        {
          name: "web",
          source: { kind: "kustomize", path: join(FILES, "overlay") },
          probe: { kind: "http", port: 8080, path: "/healthz" },
        },
      ],
      fault: {
        type: "stop",
        target: { kind: "workload", workload: "db" },
        operator: { action: "force-delete", afterMs: 20_000 },
      },
      controller: {
        enabled: true,
        settings: {
          unhealthyAfterMs: 6_000,
          checkIntervalMs: 500,
          healthyBeforeUnfenceMs: 2_000,
          detachGraceMs: 5_000,
          maxUnhealthy: "40%",
        },
        fenceConfig: join(FILES, "fence.yaml"),
      },
      budgets: [
        {
          workload: "db",
          recoveredWithinMs: 45_000,
          servingWithinMs: 60_000,
          maxUnavailable: 1,
          neverEvicted: true,
          neverReadyOnTwoNodes: true,
        },
        { workload: "web", recoveredWithinMs: 30_000 },
      ],
      repeat: 3,
    });
  });

  it("records the position of every key and list item by JSON pointer, in the file as given", function () {
    const path = join(VALID, "a-database.yaml");
    const [file] = loadScenarioFiles([path]);
    const at = (pointer: string): string => {
      const position = file!.positions.get(pointer);
      return position === undefined ? "absent" : `${position.file}:${position.line}:${position.column}`;
    };
    expect(at("/apiVersion")).to.equal(`${path}:2:1`);
    expect(at("/spec/fault")).to.equal(`${path}:31:3`);
    expect(at("/spec/fault/target")).to.equal(`${path}:33:5`);
    expect(at("/spec/fault/target/workload")).to.equal(`${path}:33:14`);
    expect(at("/spec/workloads/1")).to.equal(`${path}:27:7`);
    expect(at("/spec/workloads/1/probe/http/path")).to.equal(`${path}:30:28`);
    expect(at("/spec/cluster/knobs/nodeLeaseDuration")).to.equal(`${path}:14:7`);
    expect(at("/spec/budgets/1/recoveredWithin")).to.equal(`${path}:52:7`);
    expect(at("/spec/nothing")).to.equal("absent");
  });

  it("fills the defaults: controller off, no budgets, repeat 1, cluster empty; http path /", function () {
    const [file] = loadScenarioFiles([join(VALID, "b-minimal.yaml")]);
    expect(withoutPositions(file!)).to.deep.equal({
      path: resolve(VALID, "b-minimal.yaml"),
      name: "zone-outage",
      cluster: {},
      workloads: [{ name: "web", source: { kind: "manifests", paths: [join(FILES, "web.yaml")] } }],
      fault: {
        type: "partition",
        target: { kind: "zone", zone: "zone-a", count: 2 },
        durationMs: 45_000,
        staggerMs: 5_000,
      },
      controller: { enabled: false },
      budgets: [],
      repeat: 1,
    });
  });

  it("loads a directory's *.yaml files in name order, not its subdirectories", function () {
    const files = loadScenarioFiles([VALID]);
    expect(files.map((f) => f.name)).to.deep.equal(["db-node-loss", "zone-outage"]);
    expect(files[1]!.positions.get("/metadata/name")?.file).to.equal(join(VALID, "b-minimal.yaml"));
  });

  it("loads several paths in the order given, a file named twice once", function () {
    const minimal = join(VALID, "b-minimal.yaml");
    const files = loadScenarioFiles([minimal, VALID, `./${minimal}`]);
    expect(files.map((f) => f.name)).to.deep.equal(["zone-outage", "db-node-loss"]);
  });

  it("loads a workload already deployed and a label-selector target", function () {
    const [file] = loadScenarioFiles([join(DIR, "duplicate-names", "a.yaml")]);
    expect(file!.workloads[0]!.source).to.deep.equal({
      kind: "deployed",
      namespace: "prod",
      matchLabels: { app: "web" },
    });
    expect(file!.fault.target).to.deep.equal({
      kind: "selector",
      matchLabels: { "rekindle.dev/pool": "blue" },
    });
  });

  it("names the subdirectories that hold scenario files when a directory has none of its own", function () {
    const examples = join(PROJECT_ROOT, "examples");
    const error = loadError([examples]);
    expect(error.message).to.include(`${examples}: a directory with no scenario file in it`);
    expect(error.message).to.include(
      `these hold scenario files: give them with -f each: ${join(examples, "database-pdb-controller")}, `,
    );
  });

  it("refuses a directory without scenario files, a path that is not there, and no path at all", function () {
    const error = loadError([join(DIR, "empty-dir"), join(DIR, "nowhere.yaml")]);
    expect(error.code).to.equal("INVALID_INPUT");
    expect(error.message.split("\n")).to.deep.equal([
      `${join(DIR, "empty-dir")}: a directory with no scenario file in it (a *.yaml or *.yml whose apiVersion is rekindle.dev/…)`,
      `${join(DIR, "nowhere.yaml")}: no such file or directory`,
    ]);
    expect(loadError([]).message).to.equal(
      "no scenario file given; give a file or a directory of *.yaml files",
    );
  });

  it("loads a directory's scenario file and leaves the manifests beside it alone", function () {
    const dir = join(PROJECT_ROOT, "examples", "database-pdb-controller");
    const files = loadScenarioFiles([dir]);
    expect(files.map((f) => f.name)).to.deep.equal(["database-pdb-controller"]);
    expect(files[0]?.workloads[0]?.source).to.deep.equal({
      kind: "manifests",
      paths: [join(dir, "db.yaml")],
    });
  });

  it("refuses two files of one name, at the second file's metadata.name", function () {
    const dir = join(DIR, "duplicate-names");
    const error = loadError([dir]);
    expect(error.message).to.equal(
      `${join(dir, "b.yaml")}:4:3: metadata.name "same-name" is also the name of ${join(dir, "a.yaml")}; scenario names are unique in a run`,
    );
  });

  it("reports the problems of every file in one error, file by file", function () {
    const error = loadError([join(DIR, "invalid", "empty.yaml"), join(DIR, "invalid", "two-documents.yaml")]);
    const lines = error.message.split("\n");
    expect(lines).to.have.length(2);
    expect(lines[0]).to.match(/empty\.yaml:1:1: the file is empty/);
    expect(lines[1]).to.match(/two-documents\.yaml:7:1: a second YAML document/);
    expect(error.hint).to.include("docs/scenario-files.md");
  });
});
