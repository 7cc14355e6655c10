// Schema validation of a scenario file's plain data with ajv, each ajv error turned into one line
// that names the key or value, where it is, and what would be valid. ajv's oneOf reports (one
// error per branch plus a summary) become one "give exactly one of …" line.
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import {
  escapePointer,
  pointerLabel,
  positionOf,
  unescapePointer,
  type DocumentPositions,
} from "./positions.js";
import { validList, type Problem } from "./problems.js";
import { SCENARIO_SCHEMA, type JsonSchema } from "./schema.js";

let compiled: ValidateFunction | undefined;

/** Compiled once, on first use (compiling costs tens of milliseconds). */
function validator(): ValidateFunction {
  if (compiled === undefined) {
    // verbose: each error carries its schema, which names the valid keys and values. The oneOf
    // branches require keys their parent defines, which strictRequired would refuse.
    const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, strictRequired: false });
    ajv.addKeyword("patternErrorMessage");
    compiled = ajv.compile(SCENARIO_SCHEMA);
  }
  return compiled;
}

/** The schema's problems with `data`, positioned; empty when it is valid. */
export function schemaProblems(data: unknown, positions: DocumentPositions): Problem[] {
  const validate = validator();
  if (validate(data)) return [];
  const all = validate.errors ?? [];
  // A value of the wrong type fails its enum, pattern and oneOf too: the type error alone says it.
  const wrongType = new Set(all.filter((e) => e.keyword === "type").map((e) => e.instancePath));
  const errors = all.filter(
    (error) => !insideOneOfBranch(error) && (error.keyword === "type" || !wrongType.has(error.instancePath)),
  );
  const problems: Problem[] = [];
  const missing = new Map<string, string[]>();
  for (const error of errors) {
    if (error.keyword === "required") {
      // Gathered per object: one line names every missing key.
      const list = missing.get(error.instancePath) ?? [];
      list.push(String(param(error, "missingProperty")));
      missing.set(error.instancePath, list);
      continue;
    }
    problems.push(translate(error, data, positions));
  }
  for (const [pointer, keys] of missing) {
    const quoted = keys.map((key) => JSON.stringify(key)).join(", ");
    problems.push({
      position: positionOf(positions, pointer, true),
      message: `${pointerLabel(pointer)}: missing ${keys.length === 1 ? "key" : "keys"} ${quoted}`,
    });
  }
  return problems;
}

/** The required-key branches of a oneOf: their own failures are the oneOf's, reported once. */
function insideOneOfBranch(error: ErrorObject): boolean {
  return /\/oneOf\/\d+\//.test(error.schemaPath);
}

function param(error: ErrorObject, name: string): unknown {
  const params: Record<string, unknown> = error.params;
  return params[name];
}

function parentSchema(error: ErrorObject): JsonSchema {
  return error.parentSchema ?? {};
}

/** What a value message is made of: the value's label, the value as quoted, its schema. */
interface ValueContext {
  where: string;
  got: string;
  schema: JsonSchema;
  error: ErrorObject;
}

/** Errors about a value, positioned at the value, by ajv keyword. */
const VALUE_MESSAGES: Readonly<Record<string, (c: ValueContext) => string>> = {
  enum: ({ where, got, schema }) => `${where} ${got}; valid: ${validList(schema.enum ?? [])}`,
  const: ({ where, got, schema }) => `${where} ${got}; valid: ${schema.const ?? "?"}`,
  type: ({ where, got, schema }) => `${where}: expected ${typeName(schema.type)}, got ${got}`,
  pattern: ({ where, got, schema }) =>
    `${where} ${got}: ${schema.patternErrorMessage ?? `expected a match of ${schema.pattern ?? "?"}`}`,
  minimum: ({ where, got, schema }) => `${where} ${got}: ${rangeText(schema)}`,
  maximum: ({ where, got, schema }) => `${where} ${got}: ${rangeText(schema)}`,
  minLength: ({ where }) => `${where}: empty; give a value`,
  maxLength: ({ where, got, schema }) => `${where} ${got}: longer than ${schema.maxLength ?? "?"} characters`,
  minItems: ({ where, schema }) => `${where}: an empty list; give at least ${schema.minItems ?? 1}`,
  minProperties: ({ where }) => `${where}: empty; give at least one key: value`,
};

function translate(error: ErrorObject, root: unknown, positions: DocumentPositions): Problem {
  const keyed = keyProblem(error, root, positions);
  if (keyed !== undefined) return keyed;
  const where = pointerLabel(error.instancePath);
  const context = { where, got: describeValue(error.data), schema: parentSchema(error), error };
  const message = VALUE_MESSAGES[error.keyword]?.(context) ?? `${where}: ${error.message ?? error.keyword}`;
  return { position: positionOf(positions, error.instancePath), message };
}

/** Errors about a key (unknown, needing another, one of several): positioned at the key. */
function keyProblem(error: ErrorObject, root: unknown, positions: DocumentPositions): Problem | undefined {
  const pointer = error.instancePath;
  const where = pointerLabel(pointer);
  switch (error.keyword) {
    case "additionalProperties": {
      const key = String(param(error, "additionalProperty"));
      const valid = Object.keys(parentSchema(error).properties ?? {});
      const inWhere = pointer === "" ? "at the top level" : `in ${where}`;
      return {
        position: positionOf(positions, `${pointer}/${escapePointer(key)}`, true),
        message: `unknown key ${JSON.stringify(key)} ${inWhere}; valid: ${validList(valid)}`,
      };
    }
    case "dependencies": {
      const key = String(param(error, "property"));
      const needs = String(param(error, "missingProperty"));
      return {
        position: positionOf(positions, `${pointer}/${escapePointer(key)}`, true),
        message: `${where}: ${JSON.stringify(key)} needs ${JSON.stringify(needs)}`,
      };
    }
    case "oneOf":
      return { position: positionOf(positions, pointer, true), message: oneOfMessage(error, root, where) };
    default:
      return undefined;
  }
}

/** "give exactly one of manifests, kustomize, deployed", with what was found when too many. */
function oneOfMessage(error: ErrorObject, root: unknown, where: string): string {
  const branches = Array.isArray(error.schema) ? (error.schema as JsonSchema[]) : [];
  const keys = branches.flatMap((branch) => branch.required ?? []);
  const value = valueAt(root, error.instancePath);
  const given = keys.filter((key) => typeof value === "object" && value !== null && key in value);
  const found = given.length > 1 ? ` (found ${validList(given)})` : "";
  return `${where}: give exactly one of ${validList(keys)}${found}`;
}

function valueAt(root: unknown, pointer: string): unknown {
  let current = root;
  for (const raw of pointer.split("/").slice(1)) {
    const segment = unescapePointer(raw);
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function rangeText(schema: JsonSchema): string {
  const whole = schema.type === "integer" ? "a whole number" : "a number";
  if (schema.minimum !== undefined && schema.maximum !== undefined)
    return `expected ${whole} from ${schema.minimum} to ${schema.maximum}`;
  if (schema.minimum !== undefined) return `expected ${whole} of at least ${schema.minimum}`;
  return `expected ${whole} of at most ${schema.maximum ?? "?"}`;
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  object: "a mapping (key: value)",
  array: "a list",
  string: "a string",
  integer: "a whole number",
  number: "a number",
  boolean: "true or false",
};

function typeName(type: JsonSchema["type"]): string {
  return type === undefined ? "another type" : (TYPE_NAMES[type] ?? type);
}

/** A value as the message quotes it: strings and numbers as JSON, collections by their kind. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return JSON.stringify(value);
}
