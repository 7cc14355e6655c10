// Rules as a caller hands them over (the control API's JSON, proxy.setRules): a rule's text form,
// or a FaultRule object, checked by writing it in its text form and reading that back, so both
// forms pass the one parser and its error messages.
import { RekindleError } from "../../errors.js";
import { isObject } from "../../util/is-object.js";
import { parseRule, RULE_FORM, ruleText } from "./rule-syntax.js";
import { DEFAULT_VERBS, type FaultRule, type VerbClass } from "./rules.js";

/** The longest list of rules a proxy holds. */
export const MAX_RULES = 100;

function optionalString(value: unknown): value is string | undefined {
  return value === undefined || typeof value === "string";
}

function ruleObject(value: Record<string, unknown>, index: number): FaultRule {
  const { match, action, verbs } = value;
  const shaped =
    isObject(match) &&
    typeof match["resource"] === "string" &&
    optionalString(match["group"]) &&
    optionalString(match["version"]) &&
    optionalString(match["namespace"]) &&
    optionalString(match["name"]) &&
    isObject(action) &&
    typeof action["type"] === "string" &&
    (verbs === undefined || (Array.isArray(verbs) && verbs.every((v) => typeof v === "string")));
  if (!shaped)
    throw new RekindleError("INVALID_INPUT", `proxy rule ${index + 1} is not a rule`, {
      hint: `a rule is a string ${RULE_FORM}, or {match: {resource, group?, version?, namespace?, name?}, verbs?, action: {type, …}}`,
      details: { rule: value },
    });
  const rule = {
    match: match as unknown as FaultRule["match"],
    action: action as unknown as FaultRule["action"],
    verbs:
      (verbs as FaultRule["verbs"] | undefined) ??
      (DEFAULT_VERBS as Partial<Record<string, readonly VerbClass[]>>)[String(action["type"])] ??
      [],
  };
  if (rule.verbs.length === 0 && verbs !== undefined)
    throw new RekindleError("INVALID_INPUT", `proxy rule ${index + 1} applies to no verb class`, {
      hint: "verbs: watch, read and/or write; or leave it out for the action's default",
    });
  return parseRule(ruleText(rule));
}

/** The rules `values` describe (each a string or an object), checked; bad input names the rule. */
export function checkRules(values: readonly unknown[]): FaultRule[] {
  if (values.length > MAX_RULES)
    throw new RekindleError("INVALID_INPUT", `${values.length} proxy rules; at most ${MAX_RULES}`, {});
  return values.map((value, index) => {
    if (typeof value === "string") return parseRule(value);
    if (isObject(value)) return ruleObject(value, index);
    throw new RekindleError("INVALID_INPUT", `proxy rule ${index + 1} is a ${typeof value}`, {
      hint: `a rule is a string ${RULE_FORM}, or a rule object`,
    });
  });
}
