// The start-up check of the fence configuration against the cluster: every node the controller may
// fence (not control plane, not excluded) resolves to a template, a registered driver, a Secret
// that exists and holds the keys the driver needs, and options and credentials its driver accepts.
// A node added later is checked when it is fenced (the driver checks its target before each call).
import { errorMessage, RekindleError } from "../errors.js";
import { k8s } from "../kube/client.js";
import { isControlPlaneNode } from "../kube/queries.js";
import type { FenceDriverRegistry } from "./drivers/registry.js";
import { parseNodeSelector } from "./node-selector.js";
import { specProblems } from "./drivers/target-check.js";
import { resolveFenceTarget, templateFor, type FenceConfig, type SecretCache } from "./fence-config.js";

export interface FencePreflightOptions {
  kc: k8s.KubeConfig;
  fenceConfig: FenceConfig;
  drivers: FenceDriverRegistry;
  /** Where a secretRef without a namespace points: the controller's namespace. */
  namespace: string;
  /** Nodes with this label are never fenced, so they need no template. */
  excludeLabel: string;
  /** Nodes it does not match are never fenced, so they need no template. Default "" (every node). */
  nodeSelector?: string;
}

export interface FencePreflightResult {
  /** Nodes whose fencing was checked, sorted. */
  checked: string[];
  /** Names in the configuration's `nodes` map that are not in the cluster (a typo, or a node not yet joined). */
  unknownNodes: string[];
}

/** At most this many problems are listed; the count of the rest follows. */
const MAX_LISTED_PROBLEMS = 20;

/** Problems with one node's fencing (empty when it can be fenced); API failures other than a Secret's are thrown. */
async function nodeProblems(
  options: FencePreflightOptions,
  node: string,
  secrets: SecretCache,
): Promise<string[]> {
  const { kc, fenceConfig, drivers, namespace } = options;
  let template: string;
  let secret = "";
  try {
    const found = templateFor(fenceConfig, node);
    template = found.name;
    const ref = found.template.secretRef;
    if (ref) secret = `, Secret ${ref.namespace ?? namespace}/${ref.name}`;
    const { driver: name, target } = await resolveFenceTarget(kc, fenceConfig, node, namespace, secrets);
    const driver = drivers.get(name);
    if (!driver) return [`node ${node}: fence driver "${name}" is not registered`];
    const problems = driver.spec ? specProblems(driver.spec, target) : [];
    return problems.map((p) => `node ${node} (template ${template}, driver ${name}${secret}): ${p}`);
  } catch (error) {
    if (error instanceof RekindleError && (error.code === "INVALID_INPUT" || error.code === "PRECONDITION")) {
      return [`node ${node}: ${error.message}`];
    }
    throw error;
  }
}

/**
 * Checks that every fenceable node of the cluster can be fenced as configured. Throws one
 * INVALID_INPUT listing every node's problems; UNREACHABLE when the nodes cannot be listed.
 */
export async function checkFenceTargets(options: FencePreflightOptions): Promise<FencePreflightResult> {
  let nodes: k8s.V1Node[];
  try {
    nodes = (await options.kc.makeApiClient(k8s.CoreV1Api).listNode()).items;
  } catch (error) {
    throw new RekindleError("UNREACHABLE", `cannot list the cluster's nodes: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  const names = new Set(nodes.map((n) => n.metadata?.name ?? ""));
  const selector = parseNodeSelector(options.nodeSelector ?? "");
  const fenceable = nodes
    .filter(
      (n) =>
        !isControlPlaneNode(n) &&
        n.metadata?.labels?.[options.excludeLabel] === undefined &&
        selector.matches(n.metadata?.labels),
    )
    .map((n) => n.metadata?.name ?? "")
    .sort();
  const secrets: SecretCache = new Map();
  const problems: string[] = [];
  for (const node of fenceable) problems.push(...(await nodeProblems(options, node, secrets)));
  if (problems.length > 0) {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS);
    const more = problems.length - listed.length;
    throw new RekindleError(
      "INVALID_INPUT",
      `the fence configuration does not fit the cluster's nodes:\n${listed.map((p) => `  - ${p}`).join("\n")}${more > 0 ? `\n  … and ${more} more` : ""}`,
      { details: { problems } },
    );
  }
  return {
    checked: fenceable,
    unknownNodes: Object.keys(options.fenceConfig.nodes ?? {})
      .filter((n) => !names.has(n))
      .sort(),
  };
}
