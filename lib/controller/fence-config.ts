// Per-node fence configuration with shared templates (as the fencing proposal's NodeFenceConfig):
// templates name a driver and its options; nodes map to a template; credentials come only from
// the Secret a template references. Parsing and checking a file: fence-config-parse.ts.
import { errorMessage, RekindleError } from "../errors.js";
import { apiStatus, k8s } from "../kube/client.js";
import type { FenceTarget } from "./drivers/types.js";

export interface FenceTemplate {
  driver: string;
  options?: Record<string, string>;
  /** Secret whose data become the driver's credentials (e.g. username, password, token). */
  secretRef?: { name: string; namespace?: string };
}

export interface FenceConfig {
  templates: Record<string, FenceTemplate>;
  /** node name → template name; nodes not listed use `defaultTemplate`. */
  nodes?: Record<string, string>;
  defaultTemplate?: string;
}

/** The placeholder a template option may hold, replaced by the node's name. */
export const NODE_PLACEHOLDER = "{{node}}";

export function templateFor(config: FenceConfig, node: string): { name: string; template: FenceTemplate } {
  const name = config.nodes?.[node] ?? config.defaultTemplate;
  if (name === undefined) {
    throw new RekindleError("INVALID_INPUT", `no fence template for node ${node}`, {
      hint: "map the node in `nodes` or set `defaultTemplate`",
    });
  }
  const template = config.templates[name];
  if (!template) throw RekindleError.invalidInput("fence template", name, Object.keys(config.templates));
  return { name, template };
}

/** A template's options for `node`: every "{{node}}" replaced by the node's name. */
export function optionsFor(template: FenceTemplate, node: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(template.options ?? {}).map(([k, v]) => [k, v.replaceAll(NODE_PLACEHOLDER, node)]),
  );
}

/** Secret data already read, by "namespace/name": one read per Secret when many nodes share it. */
export type SecretCache = Map<string, Promise<Record<string, string>>>;

/**
 * The Secret's data, decoded. A Secret that does not exist is INVALID_INPUT, one the controller may
 * not read PRECONDITION; both name the Secret and `usedBy` (the template and node that need it).
 */
export async function readSecretData(
  kc: k8s.KubeConfig,
  ref: { name: string; namespace: string },
  usedBy: string,
): Promise<Record<string, string>> {
  const secretName = `${ref.namespace}/${ref.name}`;
  let secret: k8s.V1Secret;
  try {
    secret = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret(ref);
  } catch (error) {
    const status = apiStatus(error);
    if (status === 404) {
      throw new RekindleError("INVALID_INPUT", `Secret ${secretName}, named by ${usedBy}, does not exist`, {
        hint: `create it in namespace ${ref.namespace} with the keys the driver needs, e.g. kubectl -n ${ref.namespace} create secret generic ${ref.name} --from-literal=username=… --from-literal=password=…`,
      });
    }
    if (status === 403) {
      throw new RekindleError(
        "PRECONDITION",
        `the controller may not read Secret ${secretName}, named by ${usedBy}: ${errorMessage(error)}`,
        {
          hint: "deploy/controller/rbac.yaml lets it read Secrets in its own namespace only: keep fence credentials there",
        },
      );
    }
    throw new RekindleError("UNREACHABLE", `cannot read Secret ${secretName}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  return Object.fromEntries(
    Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
  );
}

export async function resolveFenceTarget(
  kc: k8s.KubeConfig,
  config: FenceConfig,
  node: string,
  defaultNamespace: string,
  secrets?: SecretCache,
): Promise<{ driver: string; target: FenceTarget }> {
  const { name, template } = templateFor(config, node);
  let credentials: Record<string, string> = {};
  if (template.secretRef) {
    const ref = {
      name: template.secretRef.name,
      namespace: template.secretRef.namespace ?? defaultNamespace,
    };
    const key = `${ref.namespace}/${ref.name}`;
    let data = secrets?.get(key);
    if (!data) {
      // Cached for every node of the template: name the template only (the caller names the node).
      data = readSecretData(kc, ref, `fence template "${name}"`);
      secrets?.set(key, data);
    }
    credentials = await data;
  }
  return { driver: template.driver, target: { node, options: optionsFor(template, node), credentials } };
}
