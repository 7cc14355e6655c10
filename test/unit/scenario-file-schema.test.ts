// The scenario file schema (lib/scenario-file/schema.ts): a valid draft-07 schema that describes
// every property and refuses unknown keys everywhere, published as docs/scenario.schema.json (kept
// current by `npm run docs`), and the complete example of docs/scenario-files.md loads.
import { expect } from "chai";
import { Ajv } from "ajv";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { SCENARIO_SCHEMA_PAGE, scenarioSchemaPageText } from "../../tools/docs/pages.js";
import { loadScenarioFiles } from "../../lib/scenario-file/load.js";
import { SCENARIO_SCHEMA, type JsonSchema } from "../../lib/scenario-file/schema.js";
import { FAULT_TYPES } from "../../lib/scenario-file/types.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";

/** Every schema in the tree with the JSON pointer-ish path to it. */
function* schemas(schema: JsonSchema, path = "#"): Generator<[string, JsonSchema]> {
  yield [path, schema];
  for (const [key, child] of Object.entries(schema.properties ?? {})) yield* schemas(child, `${path}/${key}`);
  if (schema.items !== undefined) yield* schemas(schema.items, `${path}/items`);
  if (typeof schema.additionalProperties === "object")
    yield* schemas(schema.additionalProperties, `${path}/additionalProperties`);
}

describe("scenario files: the schema", function () {
  it("docs/scenario.schema.json is current", function () {
    const stale = "is stale: run `npm run docs` and commit the result";
    expect(
      readFileSync(SCENARIO_SCHEMA_PAGE, "utf8") === scenarioSchemaPageText(),
      `docs/scenario.schema.json ${stale}`,
    ).to.equal(true);
    expect(JSON.parse(scenarioSchemaPageText())).to.deep.equal(SCENARIO_SCHEMA);
  });

  it("is a valid draft-07 schema", function () {
    const ajv = new Ajv({ strict: false });
    expect(ajv.validateSchema(SCENARIO_SCHEMA), JSON.stringify(ajv.errors)).to.equal(true);
    expect(SCENARIO_SCHEMA.$schema).to.equal("http://json-schema.org/draft-07/schema#");
  });

  it("describes every property and refuses unknown keys in every object", function () {
    for (const [path, schema] of schemas(SCENARIO_SCHEMA)) {
      if (path !== "#" && !path.endsWith("/additionalProperties")) {
        expect(schema.description, `${path} has no description`).to.be.a("string").and.not.equal("");
      }
      if (schema.properties !== undefined) {
        expect(schema.additionalProperties, `${path} accepts unknown keys`).to.equal(false);
      }
    }
  });

  it("offers the fault types of the contract and oneOf for workload source and target", function () {
    const spec = SCENARIO_SCHEMA.properties?.["spec"]?.properties;
    const fault = spec?.["fault"]?.properties;
    expect(fault?.["type"]?.enum).to.deep.equal(FAULT_TYPES);
    expect(spec?.["workloads"]?.items?.oneOf?.map((b) => b.required)).to.deep.equal([
      ["manifests"],
      ["kustomize"],
      ["deployed"],
    ]);
    expect(fault?.["target"]?.oneOf?.map((b) => b.required)).to.deep.equal([
      ["workload"],
      ["matchLabels"],
      ["zone"],
    ]);
  });

  it("loads the complete example of docs/scenario-files.md", function () {
    const page = readFileSync(join(PROJECT_ROOT, "docs", "scenario-files.md"), "utf8");
    const example = /## A complete example\s+```yaml\n([\s\S]*?)```/.exec(page)?.[1];
    expect(example, "the page's complete example").to.be.a("string");
    const dir = mkdtempSync(join(tmpdir(), "rekindle-scenario-example-"));
    try {
      // The files the example names, so its paths check out.
      for (const file of [
        "kind.yaml",
        "db/statefulset.yaml",
        "db/pdb.yaml",
        "overlays/ci/kustomization.yaml",
        "fence.yaml",
      ]) {
        mkdirSync(dirname(join(dir, file)), { recursive: true });
        writeFileSync(join(dir, file), "{}\n");
      }
      writeFileSync(join(dir, "example.yaml"), example ?? "");
      const [loaded] = loadScenarioFiles([join(dir, "example.yaml")]);
      expect(loaded?.name).to.equal("db-node-loss");
      expect(loaded?.workloads.map((w) => w.name)).to.deep.equal(["db", "web"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
