// Idempotent taint edits: each returns whether it changed anything.
import { k8s } from "./client.js";
import { retryOnConflict } from "./conflict.js";

async function updateTaints(
  kc: k8s.KubeConfig,
  nodeName: string,
  edit: (taints: k8s.V1Taint[]) => k8s.V1Taint[] | undefined,
): Promise<boolean> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  return retryOnConflict(`taint update on node ${nodeName}`, async () => {
    const node = await core.readNode({ name: nodeName });
    const next = edit(node.spec?.taints ?? []);
    if (next === undefined) return false;
    await core.replaceNode({ name: nodeName, body: { ...node, spec: { ...node.spec, taints: next } } });
    return true;
  });
}

export function addTaint(kc: k8s.KubeConfig, nodeName: string, taint: k8s.V1Taint): Promise<boolean> {
  return updateTaints(kc, nodeName, (taints) =>
    taints.some((t) => t.key === taint.key && t.effect === taint.effect)
      ? undefined
      : [...taints, taint.effect === "NoExecute" ? { ...taint, timeAdded: new Date() } : taint],
  );
}

export function removeTaint(
  kc: k8s.KubeConfig,
  nodeName: string,
  key: string,
  effect?: string,
): Promise<boolean> {
  return updateTaints(kc, nodeName, (taints) => {
    const kept = taints.filter((t) => !(t.key === key && (effect === undefined || t.effect === effect)));
    return kept.length === taints.length ? undefined : kept;
  });
}
