// The kubeconfig a client uses to reach the apiserver through the proxy: the proxy's URL, its CA
// when it serves TLS, and a user without credentials (the proxy adds its own kubeconfig's).
import { writeFileSync } from "node:fs";
import { stringify } from "yaml";
import { k8s } from "../../kube/client.js";

const NAME = "rekindle-api-proxy";

/** The kubeconfig's YAML for a proxy at `url` (`caPem`: the CA of its certificate, for https). */
export function proxyKubeconfigYaml(url: string, caPem: string | undefined): string {
  const cluster =
    caPem !== undefined
      ? { server: url, "certificate-authority-data": Buffer.from(caPem).toString("base64") }
      : // Plain HTTP on loopback; client-node speaks it only when told not to verify TLS.
        { server: url, "insecure-skip-tls-verify": true };
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: NAME, cluster }],
    users: [{ name: NAME, user: {} }],
    contexts: [{ name: NAME, context: { cluster: NAME, user: NAME } }],
    "current-context": NAME,
  });
}

export function proxyKubeconfig(url: string, caPem: string | undefined): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(proxyKubeconfigYaml(url, caPem));
  return kc;
}

export function writeProxyKubeconfig(path: string, url: string, caPem: string | undefined): void {
  writeFileSync(path, proxyKubeconfigYaml(url, caPem), { mode: 0o600 });
}
