// The API fault proxy's rules as one shell word each (`rekindle proxy set`), and back:
//   ACTION[=ARG],RESOURCE[.GROUP][/VERSION][,ns=NAMESPACE][,name=NAME][,verbs=watch+read+write]
// e.g. `freeze,leases.coordination.k8s.io,ns=kube-node-lease`, `delay=2s,nodes,verbs=write`,
// `drop-writes=hang,nodefences.rekindle.dev`, `close=new,pods`. RESOURCE `*` is every resource;
// GROUP `core` is the core group only (a bare RESOURCE is that resource in any group).
import { RekindleError } from "../../errors.js";
import { DURATION_FORMS, parseDurationMs } from "../../util/duration.js";
import {
  ACTION_TYPES,
  ALLOWED_VERBS,
  CLOSE_STREAMS,
  DEFAULT_VERBS,
  DROP_ANSWERS,
  VERB_CLASSES,
  type ActionType,
  type FaultAction,
  type FaultRule,
  type ResourceMatch,
  type VerbClass,
} from "./rules.js";

/** What the error messages offer as the form of a rule. */
export const RULE_FORM =
  "ACTION[=ARG],RESOURCE[.GROUP][/VERSION][,ns=NAMESPACE][,name=NAME][,verbs=watch+read+write]";

/** The longest delay a rule may hold a request or an event for. */
export const MAX_DELAY_MS = 3_600_000;

const RULE_KEYS = ["ns", "namespace", "name", "verbs"] as const;

function bad(rule: string, message: string, hint: string): RekindleError {
  return new RekindleError("INVALID_INPUT", `proxy rule ${JSON.stringify(rule)}: ${message}`, {
    hint,
    details: { rule },
  });
}

function oneOf<T extends string>(rule: string, what: string, got: string, valid: readonly T[]): T {
  if ((valid as readonly string[]).includes(got)) return got as T;
  const error = RekindleError.invalidInput(what, got, valid);
  throw bad(rule, error.message, `valid ${what} values: ${valid.join(", ")}`);
}

/** The action of `ACTION[=ARG]`. */
export function parseAction(rule: string, text: string): FaultAction {
  const [word, arg] = splitOnce(text, "=");
  const type = oneOf<ActionType>(rule, "proxy action", word, ACTION_TYPES);
  const noArg = () => {
    if (arg !== undefined)
      throw bad(rule, `${type} takes no argument (got ${JSON.stringify(arg)})`, RULE_FORM);
  };
  switch (type) {
    case "freeze":
    case "bookmarks":
      noArg();
      return { type };
    case "close":
      return { type, streams: oneOf(rule, "close streams", arg ?? "all", CLOSE_STREAMS) };
    case "drop-writes":
      return { type, answer: oneOf(rule, "drop-writes answer", arg ?? "503", DROP_ANSWERS) };
    case "delay": {
      if (arg === undefined) throw bad(rule, "delay needs a duration (delay=2s)", DURATION_FORMS);
      let ms: number;
      try {
        ms = parseDurationMs(arg, "delay");
      } catch (error) {
        throw bad(rule, (error as Error).message, DURATION_FORMS);
      }
      if (ms > MAX_DELAY_MS) throw bad(rule, `delay ${arg} is longer than 1h`, "a delay of 0 to 1h");
      return { type, ms: Math.round(ms) };
    }
  }
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

const NAME_PATTERN = /^[a-z0-9*]([-a-z0-9.]*[a-z0-9])?$/;

/** `RESOURCE[.GROUP][/VERSION]` as a selector. */
export function parseResource(rule: string, text: string): ResourceMatch {
  const [resourceGroup, version] = splitOnce(text, "/");
  const [resource, group] = splitOnce(resourceGroup, ".");
  const form = "RESOURCE[.GROUP][/VERSION], e.g. pods, leases.coordination.k8s.io, deployments.apps/v1, *";
  if (resource !== "*" && !/^[a-z0-9-]+$/.test(resource))
    throw bad(rule, `resource ${JSON.stringify(resource)} is not a plural resource name`, form);
  if (group !== undefined && !NAME_PATTERN.test(group))
    throw bad(rule, `API group ${JSON.stringify(group)} is not a group name`, form);
  if (version !== undefined && !/^v[0-9]+((alpha|beta)[0-9]+)?$/.test(version))
    throw bad(rule, `API version ${JSON.stringify(version)} is not a version such as v1`, form);
  return {
    resource,
    ...(group !== undefined ? { group: group === "core" ? "" : group } : {}),
    ...(version !== undefined ? { version } : {}),
  };
}

function parseVerbs(rule: string, text: string, action: ActionType): VerbClass[] {
  const verbs = text.split("+").map((v) => oneOf<VerbClass>(rule, "verb class", v, VERB_CLASSES));
  const refused = verbs.filter((v) => !ALLOWED_VERBS[action].includes(v));
  if (refused.length > 0)
    throw bad(
      rule,
      `${action} does not apply to ${refused.join("+")} requests`,
      `${action} applies to ${ALLOWED_VERBS[action].join("+")}`,
    );
  return [...new Set(verbs)];
}

/** One rule from its text form (RULE_FORM); bad input names the rule and what is valid. */
export function parseRule(rule: string): FaultRule {
  const [actionText = "", resourceText, ...fields] = rule.split(",");
  const action = parseAction(rule, actionText.trim());
  if (resourceText === undefined || resourceText.trim() === "")
    throw bad(rule, "no resource", `a rule is ${RULE_FORM}`);
  const match = parseResource(rule, resourceText.trim());
  let verbs: readonly VerbClass[] = DEFAULT_VERBS[action.type];
  for (const field of fields) {
    const [key, value] = splitOnce(field.trim(), "=");
    const known = oneOf(rule, "rule field", key, RULE_KEYS);
    if (value === undefined || value === "")
      throw bad(rule, `${known} needs a value (${known}=…)`, RULE_FORM);
    if (known === "verbs") verbs = parseVerbs(rule, value, action.type);
    else if (known === "name") match.name = value;
    else match.namespace = value;
  }
  return { match, verbs, action };
}

/** The text form of `rule`, which parseRule reads back as the same rule. */
export function ruleText(rule: FaultRule): string {
  const { action, match } = rule;
  const arg =
    action.type === "close"
      ? `=${action.streams}`
      : action.type === "drop-writes"
        ? `=${action.answer}`
        : action.type === "delay"
          ? `=${action.ms}ms`
          : "";
  const group = match.group === undefined ? "" : `.${match.group === "" ? "core" : match.group}`;
  const fields = [
    `${action.type}${arg}`,
    `${match.resource}${group}${match.version !== undefined ? `/${match.version}` : ""}`,
    ...(match.namespace !== undefined ? [`ns=${match.namespace}`] : []),
    ...(match.name !== undefined ? [`name=${match.name}`] : []),
    `verbs=${rule.verbs.join("+")}`,
  ];
  return fields.join(",");
}
