// Minimal HTTP(S) GET for readiness probes of components rekindle starts on loopback.
import { request as plainRequest } from "node:http";
import { request as httpsRequest } from "node:https";

export interface ProbeOptions {
  /** PEM CA bundle to verify the server with. */
  ca?: string | Buffer;
  /** Accept any certificate: only for loopback health endpoints with throwaway self-signed certs. */
  insecure?: boolean;
  bearerToken?: string;
  timeoutMs?: number;
}

export interface ProbeResult {
  status: number;
  body: string;
}

export function httpGet(url: string, options: ProbeOptions = {}): Promise<ProbeResult> {
  return httpRequest("GET", url, options);
}

export interface RequestOptions extends ProbeOptions {
  /** JSON body (sent with content-type application/json). */
  json?: unknown;
  /** HTTP basic auth. */
  basicAuth?: { username: string; password: string };
}

/** One HTTP(S) request with an optional JSON body, for BMCs and webhooks with private CAs. */
export function httpRequest(method: string, url: string, options: RequestOptions = {}): Promise<ProbeResult> {
  const target = new URL(url);
  const request = target.protocol === "https:" ? httpsRequest : plainRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      {
        method,
        ca: options.ca,
        rejectUnauthorized: options.insecure !== true,
        headers: {
          ...(options.bearerToken ? { authorization: `Bearer ${options.bearerToken}` } : {}),
          ...(options.basicAuth
            ? {
                authorization: `Basic ${Buffer.from(`${options.basicAuth.username}:${options.basicAuth.password}`).toString("base64")}`,
              }
            : {}),
          ...(options.json !== undefined ? { "content-type": "application/json" } : {}),
        },
        timeout: options.timeoutMs ?? 5_000,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on("timeout", () => {
      req.destroy(new Error(`GET ${url} timed out`));
    });
    req.on("error", reject);
    req.end(options.json !== undefined ? JSON.stringify(options.json) : undefined);
  });
}
