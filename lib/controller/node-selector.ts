// The controller's --node-selector: a Kubernetes label selector in its string form (as kubectl -l
// takes it), matched against a Node's labels. Only the nodes it matches may be fenced; the rest are
// left alone as if they carried the exclusion label. On a cluster rekindle did not create this is
// the rails' wall: the controller never powers off a node the user did not allow.
import { RekindleError } from "../errors.js";

type Requirement =
  | { key: string; op: "=" | "!="; value: string }
  | { key: string; op: "in" | "notin"; values: readonly string[] }
  | { key: string; op: "exists" | "!exists" };

export interface NodeSelector {
  /** The selector as given ("" selects every node). */
  readonly text: string;
  matches(labels: Readonly<Record<string, string>> | undefined): boolean;
}

/** A label key (optional DNS prefix and "/") or value: what the API server accepts, loosely. */
const TOKEN = /^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$/;
const VALID =
  'a label selector: comma-separated key=value, key!=value, key, !key, "key in (a,b)" or "key notin (a,b)"';

function invalid(text: string, why: string): RekindleError {
  return new RekindleError("INVALID_INPUT", `--node-selector ${JSON.stringify(text)}: ${why}`, {
    hint: `valid: ${VALID}`,
    details: { what: "--node-selector", got: text, valid: VALID },
  });
}

/** Splits at commas outside parentheses: "a in (x,y),b" → ["a in (x,y)", "b"]. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of text) {
    if (char === "(") depth += 1;
    if (char === ")") depth -= 1;
    if (char === "," && depth === 0) {
      terms.push(current.trim());
      current = "";
    } else current += char;
  }
  terms.push(current.trim());
  return terms;
}

function token(text: string, part: string, allowEmpty = false): string {
  if ((allowEmpty && part === "") || TOKEN.test(part)) return part;
  throw invalid(text, `${JSON.stringify(part)} is not a label key or value`);
}

function parseTerm(text: string, term: string): Requirement {
  if (term === "") throw invalid(text, "an empty term");
  const set = /^(\S+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(term);
  if (set) {
    const values = (set[3] ?? "").split(",").map((v) => token(text, v.trim(), true));
    return { key: token(text, set[1] ?? ""), op: set[2] === "in" ? "in" : "notin", values };
  }
  const inequality = /^([^!=\s]+)\s*!=\s*(\S*)$/.exec(term);
  if (inequality)
    return { key: token(text, inequality[1] ?? ""), op: "!=", value: token(text, inequality[2] ?? "", true) };
  const equality = /^([^!=\s]+)\s*==?\s*(\S*)$/.exec(term);
  if (equality)
    return { key: token(text, equality[1] ?? ""), op: "=", value: token(text, equality[2] ?? "", true) };
  if (term.startsWith("!")) return { key: token(text, term.slice(1).trim()), op: "!exists" };
  return { key: token(text, term), op: "exists" };
}

function satisfies(labels: Readonly<Record<string, string>>, requirement: Requirement): boolean {
  const value = labels[requirement.key];
  switch (requirement.op) {
    case "=":
      return value === requirement.value;
    case "!=":
      return value !== requirement.value;
    case "in":
      return value !== undefined && requirement.values.includes(value);
    case "notin":
      return value === undefined || !requirement.values.includes(value);
    case "exists":
      return value !== undefined;
    case "!exists":
      return value === undefined;
  }
}

/** Parses `text`; "" (or only spaces) selects every node. Throws INVALID_INPUT naming the flag. */
export function parseNodeSelector(text: string): NodeSelector {
  const requirements = text.trim() === "" ? [] : splitTerms(text).map((term) => parseTerm(text, term));
  return {
    text: text.trim(),
    matches: (labels) => requirements.every((r) => satisfies(labels ?? {}, r)),
  };
}

/** A selector for exactly these nodes by their hostname label (which the kubelet sets to its node name). */
export function hostnameSelector(nodes: readonly string[]): string {
  return `${HOSTNAME_LABEL} in (${[...nodes].sort().join(",")})`;
}

export const HOSTNAME_LABEL = "kubernetes.io/hostname";
