// The API fault proxy's typed API, for scenarios and the CLI.
export { startApiProxy, type ApiProxy, type ApiProxyOptions, type ProxyStatus } from "./proxy.js";
export { parseRule, ruleText, RULE_FORM } from "./rule-syntax.js";
export { checkRules } from "./rule-check.js";
export {
  ACTION_TYPES,
  DEFAULT_VERBS,
  VERB_CLASSES,
  ruleMatches,
  type FaultAction,
  type FaultRule,
  type ResourceMatch,
  type VerbClass,
} from "./rules.js";
export { requestTarget, type RequestTarget } from "./request-target.js";
export type { FlowStatus, ProxyCounters } from "./flow.js";
