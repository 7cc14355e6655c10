// What an API request is for, read from its method and URL as kube-apiserver reads them: the
// group, version, resource, namespace, name and subresource, and its verb class (watch, read,
// write). Paths that name no resource (/healthz, /version, discovery, /openapi) have no target.

export const VERB_CLASSES = ["watch", "read", "write"] as const;
export type VerbClass = (typeof VERB_CLASSES)[number];

export interface RequestTarget {
  /** "" for the core group (/api/v1). */
  group: string;
  version: string;
  resource: string;
  namespace?: string;
  /** From the path, or from a list or watch's `metadata.name=` field selector. */
  name?: string;
  subresource?: string;
  verb: VerbClass;
}

/** Subresources of a namespace, which kube-apiserver does not read as a resource inside it. */
const NAMESPACE_SUBRESOURCES = new Set(["status", "finalize"]);

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** The group, version and the path parts after them; undefined for a path outside /api and /apis. */
function groupVersion(
  parts: readonly string[],
): { group: string; version: string; rest: string[] } | undefined {
  const [prefix, first, second, ...after] = parts;
  if (prefix === "api" && first !== undefined)
    return { group: "", version: first, rest: [...(second !== undefined ? [second] : []), ...after] };
  if (prefix === "apis" && first !== undefined && second !== undefined)
    return { group: first, version: second, rest: after };
  return undefined;
}

/** `metadata.name=X` of a field selector (client-go's and client-node's way to watch one object). */
function selectedName(query: URLSearchParams): string | undefined {
  const selector = query.get("fieldSelector") ?? "";
  for (const term of selector.split(",")) {
    const match = /^metadata\.name==?(.+)$/.exec(term.trim());
    if (match?.[1] !== undefined) return match[1];
  }
  return undefined;
}

function isWatchQuery(query: URLSearchParams): boolean {
  const watch = query.get("watch");
  return watch === "true" || watch === "1";
}

/** The target of `method url` (url as the request line has it: path and query), or undefined. */
export function requestTarget(method: string, url: string): RequestTarget | undefined {
  const parsed = new URL(url, "http://proxy.invalid");
  const parts = parsed.pathname
    .split("/")
    .filter((p) => p !== "")
    .map((p) => decodeURIComponent(p));
  const gv = groupVersion(parts);
  if (gv === undefined) return undefined;
  let rest = gv.rest;
  const legacyWatch = rest[0] === "watch";
  if (legacyWatch) rest = rest.slice(1);
  let namespace: string | undefined;
  if (rest[0] === "namespaces" && rest[1] !== undefined) {
    namespace = rest[1];
    const inside = rest[2];
    if (inside !== undefined && !NAMESPACE_SUBRESOURCES.has(inside)) rest = rest.slice(2);
  }
  const [resource, pathName, ...sub] = rest;
  if (resource === undefined) return undefined;
  const upper = method.toUpperCase();
  const verb: VerbClass = WRITE_METHODS.has(upper)
    ? "write"
    : legacyWatch || isWatchQuery(parsed.searchParams)
      ? "watch"
      : "read";
  const name = pathName ?? selectedName(parsed.searchParams);
  return {
    group: gv.group,
    version: gv.version,
    resource,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(sub.length > 0 ? { subresource: sub.join("/") } : {}),
    verb,
  };
}

/** "leases.coordination.k8s.io/v1 kube-node-lease/worker-1 (watch)": for logs and status. */
export function describeTarget(target: RequestTarget): string {
  const resource = target.group === "" ? target.resource : `${target.resource}.${target.group}`;
  const where = [target.namespace, target.name].filter((p) => p !== undefined).join("/");
  const sub = target.subresource !== undefined ? `/${target.subresource}` : "";
  return `${resource}/${target.version}${where !== "" ? ` ${where}` : ""}${sub} (${target.verb})`;
}
