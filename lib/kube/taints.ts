// Idempotent taint edits: each returns whether it changed anything.
import { k8s } from "./client.js";
import { retryOnConflict } from "./conflict.js";

export interface TaintEditOptions {
  /** Edit only this Node object: a node deleted and registered again under the name is left alone. */
  uid?: string;
}

async function updateTaints(
  kc: k8s.KubeConfig,
  nodeName: string,
  edit: (taints: k8s.V1Taint[]) => k8s.V1Taint[] | undefined,
  options: TaintEditOptions = {},
): Promise<boolean> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  return retryOnConflict(`taint update on node ${nodeName}`, async () => {
    const node = await core.readNode({ name: nodeName });
    if (options.uid !== undefined && node.metadata?.uid !== options.uid) return false;
    const next = edit(node.spec?.taints ?? []);
    if (next === undefined) return false;
    await core.replaceNode({ name: nodeName, body: { ...node, spec: { ...node.spec, taints: next } } });
    return true;
  });
}

export function addTaint(
  kc: k8s.KubeConfig,
  nodeName: string,
  taint: k8s.V1Taint,
  options: TaintEditOptions = {},
): Promise<boolean> {
  return updateTaints(
    kc,
    nodeName,
    (taints) =>
      taints.some((t) => t.key === taint.key && t.effect === taint.effect)
        ? undefined
        : [...taints, taint.effect === "NoExecute" ? { ...taint, timeAdded: new Date() } : taint],
    options,
  );
}

export interface RemoveTaintOptions extends TaintEditOptions {
  /** Remove only a taint with this value (leave one someone else put there with another). */
  value?: string;
}

export function removeTaint(
  kc: k8s.KubeConfig,
  nodeName: string,
  key: string,
  effect?: string,
  options: RemoveTaintOptions = {},
): Promise<boolean> {
  return updateTaints(
    kc,
    nodeName,
    (taints) => {
      const kept = taints.filter(
        (t) =>
          !(
            t.key === key &&
            (effect === undefined || t.effect === effect) &&
            (options.value === undefined || t.value === options.value)
          ),
      );
      return kept.length === taints.length ? undefined : kept;
    },
    options,
  );
}
