// Reads a fence configuration file and checks it whole, before the controller starts: its shape
// (no unknown keys), that every template names a registered driver with the options that driver
// reads, and that `nodes` and `defaultTemplate` name templates that exist. Every problem found is
// reported at once, each naming where it is and what would be valid.
//
// Option values are strings. YAML numbers and booleans (`ipport: 623`, `insecure: true`) are
// turned into their text ("623", "true") on purpose, since that is what the drivers pass on;
// anything else (a list, a map, null) is refused.
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { RekindleError } from "../errors.js";
import type { FenceDriverRegistry } from "./drivers/registry.js";
import { specProblems } from "./drivers/target-check.js";
import { NODE_PLACEHOLDER, optionsFor, type FenceConfig, type FenceTemplate } from "./fence-config.js";

const TOP_LEVEL_KEYS = ["templates", "nodes", "defaultTemplate"];
const TEMPLATE_KEYS = ["driver", "options", "secretRef"];
const SECRET_REF_KEYS = ["name", "namespace"];
/** What a template looks like, for hints. */
const TEMPLATE_FORM =
  "templates: { NAME: { driver: DRIVER, options: { KEY: VALUE }, secretRef: { name: SECRET } } }, defaultTemplate: NAME, nodes: { NODE: NAME }";
/** A Kubernetes object name (an RFC 1123 subdomain) or namespace (an RFC 1123 label). */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** A node name stands in for "{{node}}" when a template's options are checked on their own. */
const SAMPLE_NODE = "node-1";

type Mapping = Record<string, unknown>;

function isMapping(value: unknown): value is Mapping {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "a map" : `a ${typeof value}`;
}

/** Collects problems, each prefixed with where in the file it is. */
class Problems {
  readonly list: string[] = [];

  add(where: string, problem: string): void {
    this.list.push(`${where}: ${problem}`);
  }

  unknownKeys(where: string, value: Mapping, valid: readonly string[]): void {
    for (const key of Object.keys(value)) {
      if (!valid.includes(key)) this.add(where, `unknown key "${key}"; valid: ${valid.join(", ")}`);
    }
  }
}

function parseOptions(where: string, raw: unknown, problems: Problems): Record<string, string> {
  if (raw === undefined) return {};
  if (!isMapping(raw)) {
    problems.add(where, `is ${describeType(raw)}; valid: a map of option names to values`);
    return {};
  }
  const options: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value === "string") options[key] = value;
    else if (typeof value === "number" || typeof value === "boolean") options[key] = String(value);
    else {
      problems.add(`${where}.${key}`, `is ${describeType(value)}; valid: a string (or a number or boolean)`);
      continue;
    }
    const placeholders = (options[key] ?? "").match(/\{\{[^}]*\}\}/g) ?? [];
    for (const placeholder of placeholders.filter((p) => p !== NODE_PLACEHOLDER)) {
      problems.add(`${where}.${key}`, `unknown placeholder ${placeholder}; valid: ${NODE_PLACEHOLDER}`);
    }
  }
  return options;
}

function parseSecretRef(where: string, raw: unknown, problems: Problems): FenceTemplate["secretRef"] {
  if (raw === undefined) return undefined;
  if (!isMapping(raw)) {
    problems.add(where, `is ${describeType(raw)}; valid: { name: SECRET, namespace: NAMESPACE }`);
    return undefined;
  }
  problems.unknownKeys(where, raw, SECRET_REF_KEYS);
  const { name, namespace } = raw;
  if (typeof name !== "string" || !OBJECT_NAME.test(name)) {
    problems.add(`${where}.name`, `is ${JSON.stringify(name)}; valid: the name of a Secret`);
    return undefined;
  }
  if (namespace !== undefined && (typeof namespace !== "string" || !NAMESPACE_NAME.test(namespace))) {
    problems.add(`${where}.namespace`, `is ${JSON.stringify(namespace)}; valid: a namespace name`);
    return undefined;
  }
  return typeof namespace === "string" ? { name, namespace } : { name };
}

function parseTemplate(where: string, raw: unknown, problems: Problems): FenceTemplate | undefined {
  if (!isMapping(raw)) {
    problems.add(where, `is ${describeType(raw)}; valid: { driver, options, secretRef }`);
    return undefined;
  }
  problems.unknownKeys(where, raw, TEMPLATE_KEYS);
  if (typeof raw["driver"] !== "string") {
    problems.add(`${where}.driver`, `is ${JSON.stringify(raw["driver"])}; valid: a fence driver's name`);
    return undefined;
  }
  const secretRef = parseSecretRef(`${where}.secretRef`, raw["secretRef"], problems);
  return {
    driver: raw["driver"],
    options: parseOptions(`${where}.options`, raw["options"], problems),
    ...(secretRef ? { secretRef } : {}),
  };
}

function parseNodes(raw: unknown, problems: Problems): Record<string, string> | undefined {
  if (raw === undefined) return undefined;
  if (!isMapping(raw)) {
    problems.add("nodes", `is ${describeType(raw)}; valid: a map of node names to template names`);
    return undefined;
  }
  const nodes: Record<string, string> = {};
  for (const [node, template] of Object.entries(raw)) {
    if (typeof template === "string") nodes[node] = template;
    else problems.add(`nodes.${node}`, `is ${describeType(template)}; valid: a template name`);
  }
  return nodes;
}

/** The configuration's shape only (no driver knowledge): the problems found, and what could be read. */
function parseShape(raw: unknown, problems: Problems): FenceConfig | undefined {
  if (!isMapping(raw)) {
    problems.add("the file", `is ${describeType(raw)}; valid: ${TEMPLATE_FORM}`);
    return undefined;
  }
  problems.unknownKeys("top level", raw, TOP_LEVEL_KEYS);
  const templates: Record<string, FenceTemplate> = {};
  if (!isMapping(raw["templates"]) || Object.keys(raw["templates"]).length === 0) {
    problems.add(
      "templates",
      `is ${describeType(raw["templates"])}; valid: a map with at least one template`,
    );
  } else {
    for (const [name, value] of Object.entries(raw["templates"])) {
      const template = parseTemplate(`templates.${name}`, value, problems);
      if (template) templates[name] = template;
    }
  }
  const nodes = parseNodes(raw["nodes"], problems);
  const defaultTemplate = raw["defaultTemplate"];
  if (defaultTemplate !== undefined && typeof defaultTemplate !== "string") {
    problems.add("defaultTemplate", `is ${describeType(defaultTemplate)}; valid: a template name`);
  }
  return {
    templates,
    ...(nodes ? { nodes } : {}),
    ...(typeof defaultTemplate === "string" ? { defaultTemplate } : {}),
  };
}

/** Template references, drivers and each driver's options (with "{{node}}" as a sample node's name). */
function checkAgainstDrivers(config: FenceConfig, drivers: FenceDriverRegistry, problems: Problems): void {
  const names = Object.keys(config.templates);
  const validTemplates = names.length > 0 ? names.join(", ") : "none defined";
  if (config.defaultTemplate !== undefined && !config.templates[config.defaultTemplate]) {
    problems.add(
      "defaultTemplate",
      `names template "${config.defaultTemplate}", which does not exist; valid: ${validTemplates}`,
    );
  }
  for (const [node, template] of Object.entries(config.nodes ?? {})) {
    if (!config.templates[template]) {
      problems.add(
        `nodes.${node}`,
        `names template "${template}", which does not exist; valid: ${validTemplates}`,
      );
    }
  }
  if (config.defaultTemplate === undefined && Object.keys(config.nodes ?? {}).length === 0) {
    problems.add("top level", "neither defaultTemplate nor nodes: no node would have a fence template");
  }
  for (const [name, template] of Object.entries(config.templates)) {
    const where = `templates.${name}`;
    const driver = drivers.get(template.driver);
    if (!driver) {
      problems.add(
        `${where}.driver`,
        `unknown fence driver "${template.driver}"; valid: ${[...drivers.keys()].join(", ")}`,
      );
      continue;
    }
    if (!driver.spec) continue;
    const required = driver.spec.requiredCredentials ?? [];
    if (required.length > 0 && !template.secretRef) {
      problems.add(where, `driver ${driver.name} needs a secretRef: a Secret with ${required.join(", ")}`);
    }
    // Credentials are checked per node, once the Secret is read.
    const sample = {
      node: SAMPLE_NODE,
      options: optionsFor(template, SAMPLE_NODE),
      credentials: Object.fromEntries(required.map((key) => [key, "x"])),
    };
    for (const problem of specProblems(driver.spec, sample)) problems.add(where, problem);
  }
}

/** Throws one INVALID_INPUT listing every problem, naming `source`. */
function throwProblems(source: string, problems: Problems, what: string): never {
  throw new RekindleError(
    "INVALID_INPUT",
    `${what} ${source}:\n${problems.list.map((p) => `  - ${p}`).join("\n")}`,
    { hint: TEMPLATE_FORM, details: { source, problems: problems.list } },
  );
}

/** A parsed fence configuration checked against the registered drivers; `source` names it in errors. */
export function parseFenceConfig(raw: unknown, drivers: FenceDriverRegistry, source: string): FenceConfig {
  const problems = new Problems();
  const config = parseShape(raw, problems);
  if (config) checkAgainstDrivers(config, drivers, problems);
  if (!config || problems.list.length > 0) throwProblems(source, problems, "invalid fence configuration");
  return config;
}

/** Reads, parses and checks the fence configuration file at `path`. */
export function loadFenceConfig(path: string, drivers: FenceDriverRegistry): FenceConfig {
  let raw: unknown;
  try {
    raw = parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new RekindleError("INVALID_INPUT", `cannot read fence configuration ${path}`, {
      cause: error,
      hint: TEMPLATE_FORM,
    });
  }
  return parseFenceConfig(raw, drivers, path);
}
