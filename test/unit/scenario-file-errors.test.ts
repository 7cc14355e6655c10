// A scenario file's mistakes (lib/scenario-file/): each is one line "file:line:column: message" at
// the offending key or value, naming what would be valid; every mistake of a file is reported at
// once (ten at most in the message, all in details.problems).
import { expect } from "chai";
import { join, resolve } from "node:path";
import type { RekindleError } from "../../lib/errors.js";
import { rekindleThrow } from "../support/assertions.js";
import { loadScenarioFiles, scenarioFromText } from "../../lib/scenario-file/load.js";

const DIR = "test/fixtures/scenario-files";
const INVALID = join(DIR, "invalid");

function loadError(paths: readonly string[]): RekindleError {
  return rekindleThrow(() => loadScenarioFiles(paths));
}

/** Every problem of a fixture, as "line:column: message" (details hold those the message cuts off). */
function problems(name: string): string[] {
  const error = loadError([join(INVALID, name)]);
  expect(error.code).to.equal("INVALID_INPUT");
  const list = error.details["problems"] as { file: string; line: number; column: number; message: string }[];
  for (const problem of list) expect(problem.file).to.equal(join(INVALID, name));
  return list
    .map((p) => ({ ...p, text: `${p.line}:${p.column}: ${p.message}` }))
    .sort((a, b) => a.line - b.line || a.column - b.column)
    .map((p) => p.text);
}

/** A file of five fixed lines (apiVersion, kind, metadata, name, `spec:`) and then `spec`. */
function inline(spec: string): string {
  return [
    "apiVersion: rekindle.dev/v1alpha1",
    "kind: Scenario",
    "metadata:",
    "  name: inline",
    "spec:",
    spec,
  ].join("\n");
}

const WORKLOAD = "  workloads: [{name: web, manifests: [valid/files/web.yaml]}]";
const STOP = "  fault: {type: stop, target: {workload: web}}";

/** The problem lines of an inline file, as if it were test/fixtures/scenario-files/inline.yaml. */
function inlineProblems(text: string): string[] {
  const result = scenarioFromText(text, resolve(DIR, "inline.yaml"), "inline.yaml");
  if (result.ok) throw new Error("the inline file loaded without an error");
  return result.problems.map(
    (p) => `${p.position.file}:${p.position.line}:${p.position.column}: ${p.message}`,
  );
}

describe("scenario files: errors", function () {
  it("names unknown keys, bad enum values, patterns, ranges and oneOf, each at its node", function () {
    expect(problems("schema-errors.yaml")).to.deep.equal([
      `4:9: metadata.name "Bad_Name": expected lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters`,
      '7:15: spec.cluster.provider "kindd"; valid: sim, kind, existing',
      "8:14: spec.cluster.workers 0: expected a whole number from 1 to 1000",
      "10:7: spec.workloads[0]: give exactly one of manifests, kustomize, deployed (found manifests, kustomize)",
      "13:7: spec.workloads[1]: give exactly one of manifests, kustomize, deployed",
      '15:11: spec.fault.type "explode"; valid: stop, partition, graceful-shutdown, memory-pressure, disk-pressure',
      '16:5: unknown key "tyep" in spec.fault; valid: type, target, duration, stagger, operator',
      '17:35: spec.fault.target.count: expected a whole number, got "two"',
    ]);
  });

  it("prefixes each line of the message with file:line:column", function () {
    const error = loadError([join(INVALID, "schema-errors.yaml")]);
    const lines = error.message.split("\n");
    expect(lines).to.have.length(8);
    expect(lines[6]).to.equal(
      `${join(INVALID, "schema-errors.yaml")}:16:5: unknown key "tyep" in spec.fault; valid: type, target, duration, stagger, operator`,
    );
  });

  it("says which type was expected, once per value (no enum or oneOf noise on top)", function () {
    expect(problems("wrong-types.yaml")).to.deep.equal([
      "7:5: spec.workloads: expected a list, got a mapping",
      '10:13: spec.fault.target: expected a mapping (key: value), got "web"',
      "11:14: spec.fault.stagger: expected a string, got 5",
      '14:21: spec.budgets[0].neverEvicted: expected true or false, got "yes"',
      '15:24: spec.budgets[0].recoveredWithin "soon": expected a duration such as 500ms, 45s, 2m or 1m30s (units ms, s, m, h)',
      "16:11: spec.repeat 0: expected a whole number from 1 to 100",
    ]);
  });

  it("checks what the schema cannot: names, fault keys by type and target, counts, paths", function () {
    const missing = resolve(INVALID, "missing.yaml");
    const db = resolve(DIR, "valid", "files", "db");
    const files = resolve(DIR, "valid", "files");
    expect(problems("semantic-errors.yaml")).to.deep.equal([
      "6:32: spec.cluster.zones 3: more zones than workers (spec.cluster.workers 2); valid: 1 to 2",
      `9:19: spec.workloads[0].manifests[0] "./missing.yaml": ${missing} does not exist (paths are relative to the scenario file)`,
      `10:13: spec.workloads[1].name "db" is also spec.workloads[0]'s; workload names are unique in a file`,
      `11:18: spec.workloads[1].kustomize "../valid/files/db": ${db} holds no kustomization.yaml, kustomization.yml, Kustomization; expected a kustomize directory`,
      "12:3: spec.fault: a partition fault needs a duration (how long it lasts before it is lifted), e.g. duration: 30s",
      '14:24: spec.fault.target.workload "dbx" names no workload of this file; valid: db',
      "15:5: spec.fault.stagger: target.workload selects one node; stagger needs a target that can select several nodes (matchLabels, or zone with count above 1)",
      "16:5: spec.fault.operator: an operator's action follows a stop fault only, not partition",
      `19:18: spec.controller.fenceConfig "../valid/files": ${files} is a directory; expected a file`,
      '21:17: spec.budgets[0].workload "cache" names no workload of this file; valid: db',
      "23:7: spec.budgets[1]: no objective; give at least one of recoveredWithin, servingWithin, maxUnavailable, neverEvicted, neverReadyOnTwoNodes, neverTwoWriters",
    ]);
  });

  it("refuses a duration on a fault that takes none, and stagger on a single node", function () {
    expect(problems("duration-refused.yaml")).to.deep.equal([
      "12:5: spec.fault.duration: a graceful-shutdown fault takes no duration; duration is for partition, memory-pressure, disk-pressure",
      "13:5: spec.fault.stagger: target.count is 1; stagger needs a target that can select several nodes (matchLabels, or zone with count above 1)",
    ]);
  });

  it("refuses what the provider the file names cannot do, at the key it is about", function () {
    const lines = problems("provider-refused.yaml");
    expect(lines).to.have.length(3);
    expect(lines[0]).to.match(/^8:14: spec\.cluster\.provider is existing, but cluster\.workers: /);
    expect(lines[1]).to.match(
      /^13:11: spec\.cluster\.provider is existing, but fault stop: provider existing cannot inject it \(no lifecycle capability\): /,
    );
    expect(lines[2]).to.match(/^15:25: spec\.cluster\.provider is existing, but the controller: /);
  });

  it("gives YAML syntax errors their positions, duplicate keys by name", function () {
    expect(problems("syntax.yaml")).to.deep.equal([
      '5:3: YAML: duplicate key "name"',
      "8:3: YAML: Flow sequence in block collection must be sufficiently indented and end with a ]",
      "9:1: YAML: Flow map in block collection must be sufficiently indented and end with a }",
    ]);
  });

  it("refuses a second YAML document and a file with none", function () {
    expect(problems("two-documents.yaml")).to.deep.equal([
      "7:1: a second YAML document; a scenario file holds one (put each scenario in its own file)",
    ]);
    expect(problems("empty.yaml")).to.deep.equal([
      "1:1: the file is empty; expected a scenario (apiVersion: rekindle.dev/v1alpha1, kind: Scenario)",
    ]);
  });

  it("lists ten problems of a file in the message and counts the rest; details keep them all", function () {
    const error = loadError([join(INVALID, "many-errors.yaml")]);
    const lines = error.message.split("\n");
    expect(lines).to.have.length(11);
    expect(lines[0]).to.equal(
      `${join(INVALID, "many-errors.yaml")}:5:3: unknown key "a1" in metadata; valid: name, description`,
    );
    expect(lines[10]).to.equal(`${join(INVALID, "many-errors.yaml")}: 2 more errors not shown`);
    expect(problems("many-errors.yaml")).to.have.length(12);
  });

  describe("one mistake each", function () {
    const cases: { what: string; text: string; expected: string }[] = [
      {
        what: "a wrong apiVersion",
        text: inline(`${WORKLOAD}\n${STOP}`).replace("v1alpha1", "v2"),
        expected: 'inline.yaml:1:13: apiVersion "rekindle.dev/v2"; valid: rekindle.dev/v1alpha1',
      },
      {
        what: "an unknown top-level key",
        text: `${inline(`${WORKLOAD}\n${STOP}`)}\nspecs: {}`,
        expected:
          'inline.yaml:8:1: unknown key "specs" at the top level; valid: apiVersion, kind, metadata, spec',
      },
      {
        what: "missing keys",
        text: "apiVersion: rekindle.dev/v1alpha1\nkind: Scenario\n",
        expected: 'inline.yaml:1:1: the file: missing keys "metadata", "spec"',
      },
      {
        what: "no source for a target",
        text: inline(`${WORKLOAD}\n  fault: {type: stop, target: {}}`),
        expected: "inline.yaml:7:23: spec.fault.target: give exactly one of workload, matchLabels, zone",
      },
      {
        what: "count without a zone",
        text: inline(`${WORKLOAD}\n  fault: {type: stop, target: {matchLabels: {a: b}, count: 2}}`),
        expected: 'inline.yaml:7:53: spec.fault.target: "count" needs "zone"',
      },
      {
        what: "two probes",
        text: inline(
          "  workloads:\n    - name: web\n      manifests: [valid/files/web.yaml]\n      probe: {http: {port: 80}, tcp: {port: 80}}\n" +
            STOP,
        ),
        expected: "inline.yaml:9:7: spec.workloads[0].probe: give exactly one of http, tcp (found http, tcp)",
      },
      {
        what: "a probe path with a space (it would break the request line)",
        text: inline(
          '  workloads:\n    - name: web\n      manifests: [valid/files/web.yaml]\n      probe: {http: {port: 80, path: "/a b"}}\n' +
            STOP,
        ),
        expected:
          'inline.yaml:9:38: spec.workloads[0].probe.http.path "/a b": expected a path starting with / and without spaces',
      },
      {
        what: "a deployed workload without labels",
        text: inline(`  workloads: [{name: web, deployed: {namespace: prod}}]\n${STOP}`),
        expected: 'inline.yaml:6:27: spec.workloads[0].deployed: missing key "matchLabels"',
      },
      {
        what: "empty labels",
        text: inline(`${WORKLOAD}\n  fault: {type: stop, target: {matchLabels: {}}}`),
        expected: "inline.yaml:7:45: spec.fault.target.matchLabels: empty; give at least one key: value",
      },
      {
        what: "no workloads",
        text: inline(`  workloads: []\n${STOP}`),
        expected: "inline.yaml:6:14: spec.workloads: an empty list; give at least 1",
      },
      {
        what: "an operator without its delay",
        text: inline(`${WORKLOAD}\n${STOP}`).replace(
          "{workload: web}}",
          "{workload: web}, operator: {action: drain}}",
        ),
        expected: 'inline.yaml:7:48: spec.fault.operator: missing key "after"',
      },
      {
        what: "an operator action not offered",
        text: inline(`${WORKLOAD}\n${STOP}`).replace(
          "{workload: web}}",
          "{workload: web}, operator: {action: reboot, after: 1s}}",
        ),
        expected:
          'inline.yaml:7:67: spec.fault.operator.action "reboot"; valid: force-delete, drain, out-of-service',
      },
      {
        what: "maxUnhealthy past 100%",
        text: inline(`${WORKLOAD}\n${STOP}\n  controller: {enabled: true, settings: {maxUnhealthy: "150%"}}`),
        expected:
          'inline.yaml:8:56: spec.controller.settings.maxUnhealthy "150%": expected a node count such as "2" or a percentage from "0%" to "100%"',
      },
      {
        what: "more zones than the default workers",
        text: inline(`  cluster: {zones: 4}\n${WORKLOAD}\n${STOP}`),
        expected:
          "inline.yaml:6:20: spec.cluster.zones 4: more zones than workers (the default 3 workers); valid: 1 to 3",
      },
      {
        what: "a kind config that is not there",
        text: inline(`  cluster: {kindConfig: kind.yaml}\n${WORKLOAD}\n${STOP}`),
        expected: `inline.yaml:6:25: spec.cluster.kindConfig "kind.yaml": ${resolve(DIR, "kind.yaml")} does not exist (paths are relative to the scenario file)`,
      },
      {
        what: "a budget for a workload not in the file",
        text: inline(`${WORKLOAD}\n${STOP}\n  budgets: [{workload: db, neverEvicted: true}]`),
        expected:
          'inline.yaml:8:24: spec.budgets[0].workload "db" names no workload of this file; valid: web',
      },
    ];
    for (const { what, text, expected } of cases) {
      it(what, function () {
        expect(inlineProblems(text)).to.deep.equal([expected]);
      });
    }
  });
});
