// The CLI's side of the control API (control-server.ts): status, set and clear the rules of a
// running proxy, found by its control URL.
import { RekindleError } from "../../errors.js";
import { httpRequest } from "../../util/http.js";
import type { ProxyStatus } from "./proxy.js";

/** How long a control call waits for the proxy. */
export const CONTROL_TIMEOUT_MS = 10_000;

async function call(method: string, controlUrl: string, path: string, json?: unknown): Promise<ProxyStatus> {
  let result;
  try {
    result = await httpRequest(method, `${controlUrl}${path}`, {
      timeoutMs: CONTROL_TIMEOUT_MS,
      ...(json !== undefined ? { json } : {}),
    });
  } catch (error) {
    throw new RekindleError("UNREACHABLE", `the proxy's control API at ${controlUrl} does not answer`, {
      hint: "is `rekindle proxy start` running? (--control URL or --name X picks the proxy)",
      cause: error,
    });
  }
  const body = JSON.parse(result.body) as
    (ProxyStatus & { error?: undefined }) | { error: string; hint?: string };
  if (result.status === 400 && body.error !== undefined)
    throw new RekindleError("INVALID_INPUT", body.error, body.hint !== undefined ? { hint: body.hint } : {});
  if (result.status !== 200 || body.error !== undefined)
    throw new RekindleError(
      "COMMAND_FAILED",
      `the proxy's control API answered ${result.status}: ${body.error ?? ""}`,
    );
  return body;
}

export function proxyStatus(controlUrl: string): Promise<ProxyStatus> {
  return call("GET", controlUrl, "/status");
}

/** Replaces the proxy's rules (each a rule's text form); the proxy checks them and refuses bad ones whole. */
export function setProxyRules(controlUrl: string, rules: readonly string[]): Promise<ProxyStatus> {
  return call("PUT", controlUrl, "/rules", { rules });
}

export function clearProxyRules(controlUrl: string): Promise<ProxyStatus> {
  return call("DELETE", controlUrl, "/rules");
}
