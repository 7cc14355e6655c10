// Credentials of a sim cluster: static bearer tokens per component and the service-account key pair.
// The apiserver's serving certificate is self-signed by kube-apiserver itself (--cert-dir).
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import type { SimLayout } from "./layout.js";

export interface SimIdentity {
  user: string;
  groups: string[];
}

/** Who talks to the apiserver. The bootstrap RBAC roles know the kube-* users by these names. */
export const SIM_IDENTITIES = {
  admin: { user: "rekindle-admin", groups: ["system:masters"] },
  "kube-controller-manager": { user: "system:kube-controller-manager", groups: [] },
  "kube-scheduler": { user: "system:kube-scheduler", groups: [] },
  // The simulated kubelets and the simulated CSI driver act for many nodes: cluster-admin is simplest.
  kwok: { user: "rekindle-kwok", groups: ["system:masters"] },
  "sim-csi": { user: "rekindle-sim-csi", groups: ["system:masters"] },
} as const satisfies Record<string, SimIdentity>;

export type SimIdentityName = keyof typeof SIM_IDENTITIES;

export type SimTokens = Record<SimIdentityName, string>;

export function writeSimCredentials(layout: SimLayout): SimTokens {
  mkdirSync(layout.apiserverCertDir, { recursive: true, mode: 0o700 });
  const tokens = Object.fromEntries(
    (Object.keys(SIM_IDENTITIES) as SimIdentityName[]).map((name) => [name, randomBytes(24).toString("hex")]),
  ) as SimTokens;
  const lines = (Object.keys(SIM_IDENTITIES) as SimIdentityName[]).map((name) => {
    const identity: SimIdentity = SIM_IDENTITIES[name];
    return `${tokens[name]},${identity.user},${identity.user},"${identity.groups.join(",")}"`;
  });
  writeFileSync(layout.tokenFile, `${lines.join("\n")}\n`, { mode: 0o600 });
  const { privateKey, publicKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
  });
  writeFileSync(layout.serviceAccountPrivateKey, privateKey, { mode: 0o600 });
  writeFileSync(layout.serviceAccountPublicKey, publicKey);
  return tokens;
}
