// Writes kubeconfig files for the clusters rekindle starts (token auth, CA from the apiserver).
import { writeFileSync } from "node:fs";
import { stringify } from "yaml";

export interface KubeconfigSpec {
  clusterName: string;
  server: string;
  /** Path of a PEM bundle holding the apiserver's CA. */
  certificateAuthority: string;
  user: string;
  token: string;
}

export function kubeconfigYaml(spec: KubeconfigSpec): string {
  const context = `${spec.user}@${spec.clusterName}`;
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: spec.clusterName,
        cluster: { server: spec.server, "certificate-authority": spec.certificateAuthority },
      },
    ],
    users: [{ name: spec.user, user: { token: spec.token } }],
    contexts: [{ name: context, context: { cluster: spec.clusterName, user: spec.user } }],
    "current-context": context,
  });
}

export function writeKubeconfig(path: string, spec: KubeconfigSpec): void {
  writeFileSync(path, kubeconfigYaml(spec), { mode: 0o600 });
}
