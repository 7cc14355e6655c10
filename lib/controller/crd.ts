// Installs the NodeFence CRD (fixtures/controller/crd.yaml) and waits until the apiserver serves it.
import { applyManifestFile } from "../kube/apply.js";
import { k8s } from "../kube/client.js";
import { fixturePath } from "../util/fixtures.js";
import { pollUntil } from "../util/time.js";

export const NODE_FENCE_CRD = "nodefences.rekindle.dev";

export async function installNodeFenceCrd(kc: k8s.KubeConfig, timeoutMs = 30_000): Promise<void> {
  await applyManifestFile(kc, fixturePath("controller", "crd.yaml"));
  await pollUntil(
    async () => {
      const crd = await kc
        .makeApiClient(k8s.ApiextensionsV1Api)
        .readCustomResourceDefinition({ name: NODE_FENCE_CRD });
      return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")
        ? true
        : undefined;
    },
    { what: "the NodeFence CRD established", timeoutMs },
  );
}
