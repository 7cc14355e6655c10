// The NodeFence CRD (deploy/controller/crd.yaml): whether the apiserver serves it, installing it
// and waiting until it is served, and the start-up check that does either or says how.
import { errorMessage, isApiError, RekindleError } from "../errors.js";
import { applyManifestFile } from "../kube/apply.js";
import { apiStatus, k8s } from "../kube/client.js";
import { deployPath } from "../util/project-files.js";
import { pollUntil } from "../util/time.js";
import { NODE_FENCE_GROUP, NODE_FENCE_PLURAL, NODE_FENCE_VERSION } from "./fence-state.js";

export const NODE_FENCE_CRD = "nodefences.rekindle.dev";

export async function installNodeFenceCrd(kc: k8s.KubeConfig, timeoutMs = 30_000): Promise<void> {
  await applyManifestFile(kc, deployPath("controller", "crd.yaml"));
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

/**
 * Whether the apiserver serves NodeFences: a list of at most one, with the controller's own rights
 * (it may list NodeFences, not read CRDs). A 404 means not served; any other failure is thrown:
 * UNREACHABLE when no API server answered, PRECONDITION when it refused.
 */
export async function nodeFenceCrdServed(kc: k8s.KubeConfig): Promise<boolean> {
  try {
    await kc.makeApiClient(k8s.CustomObjectsApi).listClusterCustomObject({
      group: NODE_FENCE_GROUP,
      version: NODE_FENCE_VERSION,
      plural: NODE_FENCE_PLURAL,
      limit: 1,
    });
    return true;
  } catch (error) {
    if (apiStatus(error) === 404) return false;
    const server = kc.getCurrentCluster()?.server ?? "the API server";
    if (isApiError(error)) {
      throw new RekindleError("PRECONDITION", `cannot list NodeFences at ${server}: ${errorMessage(error)}`, {
        hint: "the controller's identity needs the rights in deploy/controller/rbac.yaml",
      });
    }
    throw new RekindleError("UNREACHABLE", `cannot reach ${server}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
}

/** What `ensureNodeFenceCrd` found or did. */
export type CrdOutcome = "served" | "installed";

/**
 * The start-up check: the NodeFence CRD is served, or (with `install`) installed now; otherwise a
 * PRECONDITION error naming the CRD and the two ways to install it.
 */
export async function ensureNodeFenceCrd(
  kc: k8s.KubeConfig,
  options: { install: boolean; timeoutMs?: number },
): Promise<CrdOutcome> {
  if (await nodeFenceCrdServed(kc)) return "served";
  const manifest = deployPath("controller", "crd.yaml");
  if (!options.install) {
    throw new RekindleError(
      "PRECONDITION",
      `the NodeFence CRD (${NODE_FENCE_CRD}) is not installed in this cluster: the controller keeps every fence in a NodeFence`,
      {
        hint: `install it with \`kubectl apply -f ${manifest}\`, or run the controller once with --install-crd (needs the right to create CustomResourceDefinitions)`,
        details: { crd: NODE_FENCE_CRD, manifest },
      },
    );
  }
  try {
    await installNodeFenceCrd(kc, options.timeoutMs);
  } catch (error) {
    throw new RekindleError(
      "PRECONDITION",
      `cannot install the NodeFence CRD (${NODE_FENCE_CRD}) from ${manifest}: ${errorMessage(error)}`,
      { hint: "install it with an identity that may create CustomResourceDefinitions", cause: error },
    );
  }
  return "installed";
}
