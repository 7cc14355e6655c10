// The kube-apiserver the proxy forwards to, from a kubeconfig: its URL, TLS to it with the
// kubeconfig's CA and client certificate, and the kubeconfig user's own credentials (token,
// basic auth, exec or auth-provider plugins), read again when older than CREDENTIALS_MAX_AGE_MS.
import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
} from "node:http";
import {
  Agent as HttpsAgent,
  request as httpsRequest,
  type AgentOptions,
  type RequestOptions,
} from "node:https";
import { RekindleError } from "../../errors.js";
import type { k8s } from "../../kube/client.js";

/** Credentials from plugins expire (exec tokens after minutes): they are asked for again this often. */
export const CREDENTIALS_MAX_AGE_MS = 60_000;

export interface Upstream {
  /** The apiserver's URL, as the kubeconfig's current cluster names it. */
  readonly url: string;
  /** Sends `method path` with `headers` (plus the kubeconfig user's credentials) to the apiserver. */
  request(
    method: string,
    path: string,
    headers: Record<string, string | string[]>,
    onResponse: (res: IncomingMessage) => void,
  ): Promise<ClientRequest>;
  /** Closes the idle connections. */
  close(): void;
}

interface Credentials {
  headers: Record<string, string>;
  at: number;
}

async function credentials(kc: k8s.KubeConfig): Promise<Credentials> {
  const opts: RequestOptions & { headers: Record<string, string> } = { headers: {} };
  await kc.applyToHTTPSOptions(opts);
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(opts.headers)) headers[key.toLowerCase()] = value;
  if (typeof opts.auth === "string" && opts.auth !== "" && headers["authorization"] === undefined)
    headers["authorization"] = `Basic ${Buffer.from(opts.auth).toString("base64")}`;
  return { headers, at: Date.now() };
}

/** TLS options for the apiserver: the kubeconfig's CA, client certificate and key, server name. */
async function tlsOptions(
  kc: k8s.KubeConfig,
): Promise<Pick<AgentOptions, "ca" | "cert" | "key" | "rejectUnauthorized" | "servername">> {
  const opts: RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  return {
    ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
    ...(opts.cert !== undefined ? { cert: opts.cert } : {}),
    ...(opts.key !== undefined ? { key: opts.key } : {}),
    ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}),
    ...(opts.servername !== undefined ? { servername: opts.servername } : {}),
  };
}

/** The apiserver of `kc`'s current context. */
export async function connectUpstream(kc: k8s.KubeConfig, source: string): Promise<Upstream> {
  const server = kc.getCurrentCluster()?.server;
  if (server === undefined || server === "")
    throw new RekindleError("INVALID_INPUT", `the kubeconfig ${source} names no cluster server`, {
      hint: "its current context must name a cluster with a server URL",
    });
  const base = new URL(server);
  if (base.protocol !== "https:" && base.protocol !== "http:")
    throw RekindleError.invalidInput("kubeconfig server URL", server, "an https:// or http:// URL");
  const secure = base.protocol === "https:";
  const tls = secure ? await tlsOptions(kc) : {};
  const agent = secure ? new HttpsAgent({ keepAlive: true, ...tls }) : new HttpAgent({ keepAlive: true });
  let creds = await credentials(kc);
  const prefix = base.pathname.replace(/\/$/, "");
  return {
    url: server,
    async request(method, path, headers, onResponse) {
      if (Date.now() - creds.at > CREDENTIALS_MAX_AGE_MS) creds = await credentials(kc);
      const options: RequestOptions = {
        protocol: base.protocol,
        hostname: base.hostname.replace(/^\[|\]$/g, ""),
        port: base.port === "" ? (secure ? 443 : 80) : Number(base.port),
        method,
        path: `${prefix}${path}`,
        headers: { ...headers, ...creds.headers, host: base.host },
        agent,
      };
      return secure ? httpsRequest(options, onResponse) : httpRequest(options, onResponse);
    },
    close() {
      agent.destroy();
    },
  };
}
