// The writer workload beside a StatefulSet's own containers (a neverTwoWriters budget): one more
// container that appends to a log on the pod's ReadWriteOnce volume, so the log shows whether two
// copies of the pod ever wrote to it at once (lib/observe/two-writers.ts).
import { RekindleError } from "../errors.js";
import type { k8s } from "../kube/client.js";

export const WRITER_CONTAINER = "rekindle-writer";
/** Where the writer mounts the claim's volume, and its log there. */
export const WRITER_MOUNT = "/rekindle-writer";
export const WRITER_LOG_FILE = "writer.log";

/** The first ReadWriteOnce claim template of a StatefulSet: the volume the writer writes to. */
function rwoClaim(sts: k8s.V1StatefulSet): string | undefined {
  return sts.spec?.volumeClaimTemplates?.find((t) => t.spec?.accessModes?.includes("ReadWriteOnce"))?.metadata
    ?.name;
}

/**
 * `sts` with the writer container added (a copy; the input is left as it was). Throws
 * INVALID_INPUT, naming the object, when it has no ReadWriteOnce claim template.
 */
export function withWriterContainer(sts: k8s.V1StatefulSet, image: string): k8s.V1StatefulSet {
  const name = `StatefulSet ${sts.metadata?.name ?? "(unnamed)"}`;
  const claim = rwoClaim(sts);
  const pod = sts.spec?.template.spec;
  if (claim === undefined || pod === undefined || sts.spec === undefined) {
    throw new RekindleError(
      "INVALID_INPUT",
      `${name} has no ReadWriteOnce volumeClaimTemplate for the writer`,
      {
        hint: "neverTwoWriters needs a StatefulSet whose volumeClaimTemplates hold a ReadWriteOnce claim",
      },
    );
  }
  const writer: k8s.V1Container = {
    name: WRITER_CONTAINER,
    image,
    // Loaded into the nodes, never pulled.
    imagePullPolicy: "Never",
    args: ["--log", `${WRITER_MOUNT}/${WRITER_LOG_FILE}`],
    env: [
      { name: "POD_UID", valueFrom: { fieldRef: { fieldPath: "metadata.uid" } } },
      { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
    ],
    resources: { requests: { cpu: "10m", memory: "16Mi" } },
    volumeMounts: [{ name: claim, mountPath: WRITER_MOUNT }],
  };
  const containers = pod.containers.filter((c) => c.name !== WRITER_CONTAINER);
  return {
    ...sts,
    spec: {
      ...sts.spec,
      template: { ...sts.spec.template, spec: { ...pod, containers: [...containers, writer] } },
    },
  };
}
