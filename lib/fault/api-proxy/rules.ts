// The API fault proxy's rules: which requests a rule matches (resource, optional namespace and
// name, verb class) and what it does to them. A request is decided by the first rule that matches.
import type { RequestTarget, VerbClass } from "./request-target.js";

export { VERB_CLASSES, type VerbClass } from "./request-target.js";

export const ACTION_TYPES = ["freeze", "bookmarks", "close", "delay", "drop-writes"] as const;
export type ActionType = (typeof ACTION_TYPES)[number];

/** Which streams `close` ends: those open when it is set, those opened while it holds, or both. */
export const CLOSE_STREAMS = ["all", "open", "new"] as const;
export type CloseStreams = (typeof CLOSE_STREAMS)[number];

/** How `drop-writes` answers a write it does not forward: 503 at once, or never while it holds. */
export const DROP_ANSWERS = ["503", "hang"] as const;
export type DropAnswer = (typeof DROP_ANSWERS)[number];

export type FaultAction =
  /** The answer is held (the request went upstream): a watch stays open and forwards nothing. */
  | { type: "freeze" }
  /** A watch forwards its BOOKMARK events only (nothing is made up when upstream sends none). */
  | { type: "bookmarks" }
  | { type: "close"; streams: CloseStreams }
  /** The request goes upstream `ms` late, and each event of a watch reaches the client `ms` late. */
  | { type: "delay"; ms: number }
  /** The write never goes upstream. */
  | { type: "drop-writes"; answer: DropAnswer };

/** A resource selector; an absent field matches anything. */
export interface ResourceMatch {
  /** The resource's plural name ("leases"), or "*" for every resource. */
  resource: string;
  /** The API group; "" is the core group. Default: any group. */
  group?: string;
  /** The API version ("v1"). Default: any version. */
  version?: string;
  /** Only requests in this namespace. Default: any namespace, and cluster-wide requests. */
  namespace?: string;
  /** Only requests for this object (by its path, or a watch's metadata.name field selector). */
  name?: string;
}

export interface FaultRule {
  match: ResourceMatch;
  /** The verb classes it applies to (never empty; each action has its default, DEFAULT_VERBS). */
  verbs: readonly VerbClass[];
  action: FaultAction;
}

/** The verb classes an action applies to when a rule names none. */
export const DEFAULT_VERBS: Readonly<Record<ActionType, readonly VerbClass[]>> = {
  freeze: ["watch"],
  bookmarks: ["watch"],
  close: ["watch"],
  delay: ["watch", "read", "write"],
  "drop-writes": ["write"],
};

/** The verb classes an action can apply to at all (bookmarks are a watch's, dropped writes a write's). */
export const ALLOWED_VERBS: Readonly<Record<ActionType, readonly VerbClass[]>> = {
  freeze: ["watch", "read", "write"],
  bookmarks: ["watch"],
  close: ["watch", "read", "write"],
  delay: ["watch", "read", "write"],
  "drop-writes": ["write"],
};

/** Whether `rule` applies to a request for `target`. */
export function ruleMatches(rule: FaultRule, target: RequestTarget): boolean {
  const { match } = rule;
  if (!rule.verbs.includes(target.verb)) return false;
  if (match.resource !== "*" && match.resource !== target.resource) return false;
  if (match.group !== undefined && match.group !== target.group) return false;
  if (match.version !== undefined && match.version !== target.version) return false;
  if (match.namespace !== undefined && match.namespace !== target.namespace) return false;
  if (match.name !== undefined && match.name !== target.name) return false;
  return true;
}

/** The first rule of `rules` that applies to `target`, with its index; undefined for none. */
export function decidingRule(
  rules: readonly FaultRule[],
  target: RequestTarget | undefined,
): { rule: FaultRule; index: number } | undefined {
  if (target === undefined) return undefined;
  const index = rules.findIndex((rule) => ruleMatches(rule, target));
  const rule = rules[index];
  return rule === undefined ? undefined : { rule, index };
}
