// `docker run` flags for what deploy/controller/deployment.yaml asks of the controller container
// (its securityContext merged over the pod's, and its emptyDir mounts), so a smoke run of the image
// starts it the way the kubelet will.
import { parseAllDocuments } from "yaml";

interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  runAsGroup?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type?: string };
}

interface DeploymentShape {
  kind?: string;
  spec?: {
    template?: {
      spec?: {
        securityContext?: SecurityContext;
        containers?: {
          name: string;
          securityContext?: SecurityContext;
          volumeMounts?: { name: string; mountPath: string }[];
        }[];
        volumes?: { name: string; emptyDir?: { sizeLimit?: string } }[];
      };
    };
  };
}

/** "16Mi" → "16m" (docker's tmpfs sizes); only the binary units a manifest would use here. */
function tmpfsSize(limit: string): string {
  const match = /^(\d+)(Ki|Mi|Gi)$/.exec(limit);
  if (!match) throw new Error(`emptyDir sizeLimit ${limit}: not Ki, Mi or Gi`);
  return `${match[1]}${(match[2] ?? "").charAt(0).toLowerCase()}`;
}

type PodShape = NonNullable<NonNullable<NonNullable<DeploymentShape["spec"]>["template"]>["spec"]>;
type ContainerShape = NonNullable<PodShape["containers"]>[number];

/** The flags of the merged securityContext: read-only root, user, capabilities, no new privileges. */
function securityArgs(context: SecurityContext): string[] {
  const args: string[] = [];
  if (context.readOnlyRootFilesystem === true) args.push("--read-only");
  if (context.runAsUser !== undefined) {
    // runAsNonRoot: the kubelet refuses uid 0; a smoke run with uid 0 would prove nothing.
    if (context.runAsNonRoot === true && context.runAsUser === 0) throw new Error("runAsNonRoot with uid 0");
    args.push("--user", `${context.runAsUser}:${context.runAsGroup ?? context.runAsUser}`);
  }
  for (const cap of context.capabilities?.drop ?? []) args.push("--cap-drop", cap);
  for (const cap of context.capabilities?.add ?? []) args.push("--cap-add", cap);
  if (context.allowPrivilegeEscalation === false) args.push("--security-opt", "no-new-privileges");
  // seccompProfile RuntimeDefault: docker applies its default profile unless told otherwise.
  return args;
}

/** A tmpfs (with its size limit) for each emptyDir the container mounts. */
function tmpfsArgs(pod: PodShape, spec: ContainerShape): string[] {
  const args: string[] = [];
  for (const mount of spec.volumeMounts ?? []) {
    const emptyDir = pod.volumes?.find((v) => v.name === mount.name)?.emptyDir;
    if (emptyDir === undefined) continue;
    const size = emptyDir.sizeLimit === undefined ? "" : `:size=${tmpfsSize(emptyDir.sizeLimit)}`;
    args.push("--tmpfs", `${mount.mountPath}${size}`);
  }
  return args;
}

export function securityContextRunArgs(deploymentYaml: string, container = "controller"): string[] {
  const deployment = parseAllDocuments(deploymentYaml)
    .map((doc) => doc.toJS() as DeploymentShape)
    .find((doc) => doc.kind === "Deployment");
  const pod = deployment?.spec?.template?.spec;
  const spec = pod?.containers?.find((c) => c.name === container);
  if (pod === undefined || spec === undefined) throw new Error(`no Deployment with container ${container}`);
  const context: SecurityContext = { ...pod.securityContext, ...spec.securityContext };
  return [...securityArgs(context), ...tmpfsArgs(pod, spec)];
}
