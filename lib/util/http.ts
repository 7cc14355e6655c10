// Minimal HTTP(S) requests: readiness probes of components rekindle starts on loopback, and the
// fence drivers' calls to BMCs and webhooks (private CAs, basic or bearer auth, cancellation).
import { request as plainRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { RekindleError } from "../errors.js";

export interface ProbeOptions {
  /** PEM CA bundle to verify the server with. */
  ca?: string | Buffer;
  /** Accept any certificate: only for loopback health endpoints with throwaway self-signed certs. */
  insecure?: boolean;
  bearerToken?: string;
  /** Longest silence on the socket before the request fails with TIMEOUT. Default 5000 ms. */
  timeoutMs?: number;
  /** Aborts the request; it then fails with ABORTED, the signal's reason as its cause. */
  signal?: AbortSignal;
  /** A longer response body fails the request (a misbehaving endpoint cannot fill memory). Default 1 MiB. */
  maxBodyBytes?: number;
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

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

function authorization(options: RequestOptions): Record<string, string> {
  if (options.basicAuth) {
    const { username, password } = options.basicAuth;
    return { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}` };
  }
  return options.bearerToken ? { authorization: `Bearer ${options.bearerToken}` } : {};
}

/** One HTTP(S) request with an optional JSON body, for BMCs and webhooks with private CAs. */
export function httpRequest(method: string, url: string, options: RequestOptions = {}): Promise<ProbeResult> {
  const target = new URL(url);
  // Never the credentials in an error message: the URL's path is enough to say which call failed.
  const what = `${method} ${target.origin}${target.pathname}`;
  const { signal } = options;
  if (signal?.aborted) {
    return Promise.reject(new RekindleError("ABORTED", `${what} aborted`, { cause: signal.reason }));
  }
  const request = target.protocol === "https:" ? httpsRequest : plainRequest;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const timeoutMs = options.timeoutMs ?? 5_000;
  return new Promise((resolve, reject) => {
    // The first failure wins; an abort is reported as such whatever error it caused.
    const fail = (error: Error) => {
      reject(
        signal?.aborted ? new RekindleError("ABORTED", `${what} aborted`, { cause: signal.reason }) : error,
      );
    };
    const req = request(
      target,
      {
        method,
        ca: options.ca,
        rejectUnauthorized: options.insecure !== true,
        headers: {
          ...authorization(options),
          ...(options.json !== undefined ? { "content-type": "application/json" } : {}),
        },
        timeout: timeoutMs,
        ...(signal ? { signal } : {}),
      },
      (res) => {
        let body = "";
        let bytes = 0;
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          bytes += Buffer.byteLength(chunk);
          if (bytes > maxBodyBytes) {
            fail(new RekindleError("COMMAND_FAILED", `${what} answered more than ${maxBodyBytes} bytes`));
            req.destroy();
            return;
          }
          body += chunk;
        });
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on("error", fail);
      },
    );
    req.on("timeout", () => {
      fail(new RekindleError("TIMEOUT", `${what} timed out after ${timeoutMs} ms`));
      req.destroy();
    });
    req.on("error", fail);
    req.end(options.json !== undefined ? JSON.stringify(options.json) : undefined);
  });
}
