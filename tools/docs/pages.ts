// The generated docs pages: docs/scenarios.md (the scenario catalogue, as `rekindle list
// --markdown` prints it), docs/measurements.md (from bench/results/*.json) and
// docs/scenario.schema.json (the scenario file schema, lib/scenario-file/schema.ts). `npm run docs`
// (tools/docs/generate.ts) writes them; unit tests fail when a committed page differs from these texts.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CATALOGUE_PROFILE_NAMES, timingProfile } from "../../lib/cluster/profiles.js";
import { scenarioCatalogue } from "../../lib/cli/catalogue.js";
import { measurementsPage, type ResultsFile } from "../../lib/report/measurements.js";
import { scenarioSchemaText } from "../../lib/scenario-file/schema.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";

export const SCENARIOS_PAGE = join(PROJECT_ROOT, "docs", "scenarios.md");
export const MEASUREMENTS_PAGE = join(PROJECT_ROOT, "docs", "measurements.md");
export const SCENARIO_SCHEMA_PAGE = join(PROJECT_ROOT, "docs", "scenario.schema.json");
const RESULTS_DIR = join(PROJECT_ROOT, "bench", "results");

export function scenariosPageText(): string {
  return scenarioCatalogue({ profiles: CATALOGUE_PROFILE_NAMES.map(timingProfile) });
}

export function readResultsFiles(dir = RESULTS_DIR): ResultsFile[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .map((name) => ({ name, content: JSON.parse(readFileSync(join(dir, name), "utf8")) as unknown }));
}

export function measurementsPageText(): string {
  return measurementsPage(readResultsFiles());
}

export function scenarioSchemaPageText(): string {
  return scenarioSchemaText();
}
