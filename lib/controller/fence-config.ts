// Per-node fence configuration with shared templates (as the fencing proposal's NodeFenceConfig):
// templates name a driver and its options; nodes map to a template; credentials come only from
// the Secret a template references.
import { RekindleError } from "../errors.js";
import { k8s } from "../kube/client.js";
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

export async function resolveFenceTarget(
  kc: k8s.KubeConfig,
  config: FenceConfig,
  node: string,
  defaultNamespace: string,
): Promise<{ driver: string; target: FenceTarget }> {
  const { template } = templateFor(config, node);
  let credentials: Record<string, string> = {};
  if (template.secretRef) {
    const secret = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({
      name: template.secretRef.name,
      namespace: template.secretRef.namespace ?? defaultNamespace,
    });
    credentials = Object.fromEntries(
      Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
    );
  }
  // A template option may name the node: "{{node}}" is replaced (e.g. a BMC host per node).
  const options = Object.fromEntries(
    Object.entries(template.options ?? {}).map(([k, v]) => [k, v.replaceAll("{{node}}", node)]),
  );
  return { driver: template.driver, target: { node, options, credentials } };
}
