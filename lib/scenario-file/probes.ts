// A scenario file's in-cluster probes (`probe` on a workload): each goes through the workload's
// Service, from a prober pod on a control-plane node (lib/workloads/prober.ts). Checked against the
// manifests when the file's scenario is built (`list -f` and `run -f` alike), against the cluster
// before anything starts, and deployed once the workloads are Ready, each answering before the fault.
import type { ClusterUnderTest } from "../cluster/provider.js";
import { RekindleError } from "../errors.js";
import { RUN_LABEL, applyManifests } from "../kube/apply.js";
import { isPodReady, k8s } from "../kube/client.js";
import type { ScenarioContext } from "../scenario/harness.js";
import { pollUntil } from "../util/time.js";
import { CONTROL_PLANE_LABEL, proberName, proberPod, type ProbeCheck } from "../workloads/prober.js";
import type { WorkloadObjects } from "./manifests.js";
import type { ScenarioFile } from "./types.js";

/** One probed workload: the Service its probe goes through, and the check. */
export interface ProbeTarget {
  workload: string;
  service: string;
  check: ProbeCheck;
}

/** How long a prober may take to answer for the first time, before the fault. */
const FIRST_ANSWER_TIMEOUT_MS = 90_000;

function checkText(check: ProbeCheck): string {
  return check.kind === "http" ? `http GET ${check.path} on port ${check.port}` : `tcp port ${check.port}`;
}

function refused(file: ScenarioFile, workload: string, why: string, hint: string): RekindleError {
  return new RekindleError("INVALID_INPUT", `${file.path}: workload ${workload}'s probe: ${why}`, { hint });
}

/**
 * The file's probed workloads, each with its Service (`service`, else the one its manifests hold
 * whose selector matches its pods: `serviceOf`), checked: the Service is among the file's manifests,
 * has a cluster IP (the probe does not depend on cluster DNS, which a lost node may take down) and
 * the probe's port. Throws INVALID_INPUT naming what is missing.
 */
export function probeTargets(
  file: ScenarioFile,
  objects: readonly WorkloadObjects[],
  serviceOf: (workload: string) => string | undefined,
): ProbeTarget[] {
  const services = objects.flatMap((w) => w.objects).filter((o) => o.kind === "Service") as k8s.V1Service[];
  const targets: ProbeTarget[] = [];
  for (const workload of file.workloads) {
    const check = workload.probe;
    // A workload already deployed is provider existing's, which refuses probes (provider-refusal.ts).
    if (check === undefined || workload.source.kind === "deployed") continue;
    const name = serviceOf(workload.name);
    const hint = "the probe goes through the workload's Service, at one of the Service's ports";
    if (name === undefined)
      throw refused(file, workload.name, "no Service selects its pods, so there is nothing to probe", hint);
    const service = services.find((s) => s.metadata?.name === name);
    if (service === undefined)
      throw refused(file, workload.name, `its Service ${name} is not among the file's manifests`, hint);
    if (service.spec?.clusterIP === "None" || service.spec?.type === "ExternalName")
      throw refused(
        file,
        workload.name,
        `Service ${name} has no cluster IP (headless or ExternalName)`,
        "add a Service with a cluster IP for the probe and name it with the workload's `service`",
      );
    const ports = (service.spec?.ports ?? []).filter((p) => (p.protocol ?? "TCP") === "TCP");
    if (!ports.some((p) => p.port === check.port))
      throw refused(
        file,
        workload.name,
        `Service ${name} has no TCP port ${check.port}; its ports: ${ports.map((p) => p.port).join(", ") || "none"}`,
        hint,
      );
    targets.push({ workload: workload.name, service: name, check });
  }
  return targets;
}

/**
 * The image the probers run, checked before anything starts: the provider's tools image
 * (`toolsImage`), held by a control-plane node (from its status.images: it is never pulled).
 */
export async function proberImage(cluster: ClusterUnderTest): Promise<string> {
  const image = cluster.toolsImage?.();
  if (image === undefined) {
    throw new RekindleError(
      "INVALID_INPUT",
      `provider ${cluster.provider} cannot run in-cluster probes: it has no image to run them from`,
      { hint: "drop the workloads' `probe`, or use provider kind" },
    );
  }
  const nodes = await cluster
    .kubeConfig()
    .makeApiClient(k8s.CoreV1Api)
    .listNode({ labelSelector: CONTROL_PLANE_LABEL });
  const holds = nodes.items.some((n) =>
    (n.status?.images ?? []).some((i) => (i.names ?? []).some((name) => name === image)),
  );
  if (!holds) {
    throw new RekindleError(
      "INVALID_INPUT",
      `in-cluster probes run ${image}, which no control-plane node of ${cluster.description} holds`,
      { hint: "run kind with rekindle's node image (--image rekindle), which carries it" },
    );
  }
  return image;
}

async function clusterIp(kc: k8s.KubeConfig, namespace: string, service: string): Promise<string> {
  const read = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedService({ name: service, namespace });
  const ip = read.spec?.clusterIP;
  if (ip === undefined || ip === "" || ip === "None")
    throw new RekindleError("PRECONDITION", `Service ${service} in ${namespace} has no cluster IP to probe`);
  return ip;
}

/**
 * A prober per target, in the scenario's namespace (deleted with it), each answering before the
 * fault: a probe that never answers is a wrong port or path, not a finding.
 */
export async function deployProbers(
  context: ScenarioContext,
  targets: readonly ProbeTarget[],
  image: string,
): Promise<void> {
  const { kc, namespace, steps } = context;
  for (const target of targets) {
    const host = await clusterIp(kc, namespace, target.service);
    const what = `${checkText(target.check)} of Service ${target.service} (${host})`;
    await steps.step(`probe workload ${target.workload}: ${what}, from a control-plane node`, async () => {
      const pod = proberPod({ workload: target.workload, namespace, image, host, check: target.check });
      await applyManifests(kc, [pod], { labels: { [RUN_LABEL]: context.cluster.runId } });
      await pollUntil(
        async () => {
          const read = await kc
            .makeApiClient(k8s.CoreV1Api)
            .readNamespacedPod({ name: proberName(target.workload), namespace });
          return isPodReady(read) ? true : undefined;
        },
        {
          what: `workload ${target.workload}'s probe (${what}) answering before the fault`,
          timeoutMs: FIRST_ANSWER_TIMEOUT_MS,
          intervalMs: 500,
          ...(context.signal ? { signal: context.signal } : {}),
        },
      ).catch((error: unknown) => {
        if (context.signal?.aborted === true) throw error;
        throw new RekindleError(
          "PRECONDITION",
          `workload ${target.workload}'s probe (${what}) never answered before the fault`,
          {
            hint: "check the probe's port and path against what the workload serves (an HTTP probe wants 2xx or 3xx)",
            cause: error,
          },
        );
      });
    });
  }
}
