// Credentials of a new cluster: the PKI and tokens (pki.ts), then one kubeconfig per identity:
// the admin one for users and tests, one per component.
import { writeKubeconfig } from "../../../kube/kubeconfig.js";
import type { SimLayout } from "./layout.js";
import { SIM_IDENTITIES, writeSimCredentials, type SimIdentityName, type SimTokens } from "./pki.js";
import type { SimClusterState } from "./state.js";

const COMPONENT_IDENTITIES = ["kube-controller-manager", "kube-scheduler", "kwok", "sim-csi"] as const;

export function writeClusterCredentials(state: SimClusterState, layout: SimLayout): SimTokens {
  const tokens = writeSimCredentials(layout);
  const kubeconfigFor = (identity: SimIdentityName, path: string): void => {
    writeKubeconfig(path, {
      clusterName: state.name,
      server: state.apiserverUrl,
      certificateAuthority: layout.apiserverCertificate,
      user: SIM_IDENTITIES[identity].user,
      token: tokens[identity],
    });
  };
  kubeconfigFor("admin", layout.kubeconfig);
  for (const identity of COMPONENT_IDENTITIES) kubeconfigFor(identity, layout.componentKubeconfig(identity));
  return tokens;
}
