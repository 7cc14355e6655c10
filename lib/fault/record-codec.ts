// A fault record as a ConfigMap and back. The ConfigMap is labelled so `rekindle reap` finds every
// record (rekindle.dev/journal=fault) or one run's (rekindle.dev/run-id); its data is plain strings a
// person can read with kubectl: kind, nodes, appliedAt, deadline, and how to revert (revert).
import { RekindleError } from "../errors.js";
import type { k8s } from "../kube/client.js";
import {
  FAULT_KINDS,
  FAULT_NODE_STATES,
  type FaultAction,
  type FaultNode,
  type FaultRecord,
} from "./types.js";
import type { NodeFaultLocator } from "../cluster/provider.js";
import { isObject } from "../util/is-object.js";
import { RUN_LABEL } from "../kube/apply.js";

/**
 * Where records live. Not the controller's rekindle-system: the in-cluster scenario claims that
 * namespace for its run and deletes it afterwards, which would take the journal with it.
 */
export const JOURNAL_NAMESPACE = "rekindle-journal";
export const JOURNAL_LABEL = "rekindle.dev/journal";
export const JOURNAL_LABEL_VALUE = "fault";
export const RUN_ID_LABEL = "rekindle.dev/run-id";
/** The label every object rekindle creates carries (DESIGN.md). */

/** A run id as a label value: at most 63 of [A-Za-z0-9._-], starting and ending alphanumeric. */
export function runIdLabel(runId: string): string {
  const cleaned = runId.replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 63);
  return cleaned.replace(/^[^A-Za-z0-9]+/, "").replace(/[^A-Za-z0-9]+$/, "") || "unknown";
}

/** The label selector of every record, or of one run's. */
export function journalSelector(runId?: string): string {
  const all = `${JOURNAL_LABEL}=${JOURNAL_LABEL_VALUE}`;
  return runId === undefined ? all : `${all},${RUN_ID_LABEL}=${runIdLabel(runId)}`;
}

export function encodeRecord(record: FaultRecord): k8s.V1ConfigMap {
  const label = runIdLabel(record.runId);
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: record.id,
      namespace: JOURNAL_NAMESPACE,
      labels: { [JOURNAL_LABEL]: JOURNAL_LABEL_VALUE, [RUN_ID_LABEL]: label, [RUN_LABEL]: label },
    },
    data: {
      format: "1",
      runId: record.runId,
      kind: record.action.kind,
      ...(record.action.kind === "pressure" ? { pressure: record.action.pressure } : {}),
      nodes: JSON.stringify(record.nodes),
      appliedAt: record.appliedAt,
      deadline: record.deadline,
      revert: JSON.stringify(record.locator),
      holder: JSON.stringify(record.holder),
    },
  };
}

function unreadable(name: string, field: string, why: string): RekindleError {
  return new RekindleError("INVALID_INPUT", `fault record ${name}: ${field} ${why}`, {
    hint: `a record rekindle wrote has format 1 with kind, nodes, appliedAt, deadline, revert and holder; inspect it with kubectl -n ${JOURNAL_NAMESPACE} get configmap ${name} -o yaml`,
    details: { record: name, field },
  });
}

function parseJson(name: string, field: string, text: string | undefined): unknown {
  if (text === undefined) throw unreadable(name, field, "is missing");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw unreadable(name, field, `is not JSON: ${text.slice(0, 80)}`);
  }
}

function decodeAction(name: string, data: Record<string, string>): FaultAction {
  const kind = data["kind"];
  if (kind === "pressure") {
    const pressure = data["pressure"];
    if (pressure !== "memory" && pressure !== "disk")
      throw unreadable(name, "pressure", `is ${JSON.stringify(pressure)}; valid: memory, disk`);
    return { kind, pressure };
  }
  if (kind === "stop" || kind === "graceful-shutdown" || kind === "partition") return { kind };
  throw unreadable(name, "kind", `is ${JSON.stringify(kind)}; valid: ${FAULT_KINDS.join(", ")}`);
}

function decodeNodes(name: string, value: unknown): FaultNode[] {
  if (!Array.isArray(value)) throw unreadable(name, "nodes", "is not a list");
  return value.map((node: unknown) => {
    if (
      !isObject(node) ||
      typeof node["name"] !== "string" ||
      typeof node["at"] !== "string" ||
      !(FAULT_NODE_STATES as readonly unknown[]).includes(node["state"])
    )
      throw unreadable(name, "nodes", `holds ${JSON.stringify(node)}; each is { name, state, at }`);
    return { name: node["name"], state: node["state"] as FaultNode["state"], at: node["at"] };
  });
}

function decodeLocator(name: string, value: unknown): NodeFaultLocator {
  if (isObject(value) && value["provider"] === "sim" && typeof value["root"] === "string")
    return { provider: "sim", root: value["root"] };
  if (isObject(value) && value["provider"] === "kind" && typeof value["cluster"] === "string") {
    const dockerHost = value["dockerHost"];
    return {
      provider: "kind",
      cluster: value["cluster"],
      ...(typeof dockerHost === "string" ? { dockerHost } : {}),
    };
  }
  if (isObject(value) && value["provider"] === "existing" && typeof value["agentNamespace"] === "string")
    return { provider: "existing", agentNamespace: value["agentNamespace"] };
  throw unreadable(
    name,
    "revert",
    `is ${JSON.stringify(value)}; valid: { provider: sim, root }, { provider: kind, cluster, dockerHost? } or { provider: existing, agentNamespace }`,
  );
}

function decodeTime(name: string, field: string, text: string | undefined): string {
  if (text === undefined || Number.isNaN(Date.parse(text)))
    throw unreadable(name, field, `is not a time: ${String(text)}`);
  return text;
}

/** The record a ConfigMap holds; a RekindleError naming the ConfigMap and the field when it holds none. */
export function decodeRecord(configMap: k8s.V1ConfigMap): FaultRecord {
  const name = configMap.metadata?.name ?? "(unnamed)";
  const data = configMap.data ?? {};
  if (data["format"] !== "1")
    throw unreadable(name, "format", `is ${JSON.stringify(data["format"])}; this rekindle reads 1`);
  const runId = data["runId"];
  if (runId === undefined || runId === "") throw unreadable(name, "runId", "is missing");
  const holder = parseJson(name, "holder", data["holder"]);
  if (!isObject(holder) || typeof holder["host"] !== "string" || typeof holder["pid"] !== "number")
    throw unreadable(name, "holder", "is not { host, pid }");
  return {
    id: name,
    runId,
    action: decodeAction(name, data),
    nodes: decodeNodes(name, parseJson(name, "nodes", data["nodes"])),
    appliedAt: decodeTime(name, "appliedAt", data["appliedAt"]),
    deadline: decodeTime(name, "deadline", data["deadline"]),
    locator: decodeLocator(name, parseJson(name, "revert", data["revert"])),
    holder: {
      host: holder["host"],
      pid: holder["pid"],
      ...(typeof holder["command"] === "string" ? { command: holder["command"] } : {}),
    },
  };
}
