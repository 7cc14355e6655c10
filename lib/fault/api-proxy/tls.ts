// The proxy's serving certificate: a throwaway CA (its key discarded) and a certificate for the
// address it listens on, made at start; the CA goes into the kubeconfig it writes.
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import { servingCertificate, type ServingTls } from "../../cluster/kind/power-webhook/tls.js";

/** The addresses a client may reach `host` at: itself, or every local one for a wildcard. */
export function certificateAddresses(host: string): string[] {
  if (host === "localhost") return ["127.0.0.1", "::1"];
  if (host !== "0.0.0.0" && host !== "::") return [host];
  const local = Object.values(networkInterfaces())
    .flat()
    .flatMap((i) => (i === undefined ? [] : [i.address.split("%")[0] ?? i.address]));
  return [...new Set(local)].filter((ip) => isIP(ip) !== 0);
}

/** A certificate for the addresses `host` is reached at. */
export function proxyServingTls(host: string, signal: AbortSignal | undefined): Promise<ServingTls> {
  return servingCertificate({
    ips: certificateAddresses(host),
    commonName: "rekindle api proxy",
    ...(signal !== undefined ? { signal } : {}),
  });
}
