// Checks a summary.json against the published schema (docs/summary.schema.json, draft 2020-12) with
// Ajv: `rekindle merge` refuses a shard summary that does not conform, and the tests hold every
// summary the code writes to what docs/ promises.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { PROJECT_ROOT } from "../util/project-files.js";

export const SUMMARY_SCHEMA_PATH = join(PROJECT_ROOT, "docs", "summary.schema.json");

let compiled: ValidateFunction | undefined;

/** Compiled on first use (reading and compiling the schema costs tens of milliseconds). */
function validator(): ValidateFunction {
  if (compiled === undefined) {
    const ajv = new Ajv2020({ allErrors: true, strict: true });
    // The one format the schema uses, checked here rather than with another package.
    ajv.addFormat("date-time", (text: string) =>
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(text),
    );
    compiled = ajv.compile(JSON.parse(readFileSync(SUMMARY_SCHEMA_PATH, "utf8")) as object);
  }
  return compiled;
}

/** The schema's complaints about `summary`, one line each; empty when it conforms. */
export function summarySchemaErrors(summary: unknown): string[] {
  const validate = validator();
  if (validate(summary)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? "is invalid"}`);
}
