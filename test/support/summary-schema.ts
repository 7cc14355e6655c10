// Validates a summary.json against the published schema (docs/summary.schema.json) with Ajv's
// draft 2020-12 validator: the tests check real summaries against what docs/ promises.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { PROJECT_ROOT } from "../../lib/util/fixtures.js";

export const SUMMARY_SCHEMA_PATH = join(PROJECT_ROOT, "docs", "summary.schema.json");

const ajv = new Ajv2020({ allErrors: true, strict: true });
// The one format the schema uses, checked here rather than with another package.
ajv.addFormat("date-time", (text: string) =>
  /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(text),
);
const validate = ajv.compile(JSON.parse(readFileSync(SUMMARY_SCHEMA_PATH, "utf8")) as object);

/** The schema's complaints about `summary`, one line each; empty when it conforms. */
export function summarySchemaErrors(summary: unknown): string[] {
  if (validate(summary)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? "is invalid"}`);
}
