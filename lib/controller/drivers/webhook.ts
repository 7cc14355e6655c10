// Fencing through an HTTP service: POST {url}/power-off and /power-on with {"node": …}, GET
// {url}/power-state?node=… answering {"state": "on"|"off"}. Bearer token from the Secret's "token".
import { RekindleError } from "../../errors.js";
import type { FenceDriver, FenceTarget, PowerState } from "./types.js";

async function call(
  target: FenceTarget,
  method: "GET" | "POST",
  path: string,
  signal?: AbortSignal,
): Promise<unknown> {
  const base = target.options["url"];
  if (!base)
    throw new RekindleError("INVALID_INPUT", `webhook fence template for ${target.node} has no url option`);
  const url = new URL(path, base.endsWith("/") ? base : `${base}/`);
  if (method === "GET") url.searchParams.set("node", target.node);
  const token = target.credentials["token"];
  const response = await fetch(url, {
    method,
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(method === "POST" ? { body: JSON.stringify({ node: target.node }) } : {}),
    ...(signal ? { signal } : {}),
  });
  if (!response.ok) {
    throw new RekindleError(
      "COMMAND_FAILED",
      `webhook ${method} ${url.pathname} for ${target.node} answered ${response.status}`,
    );
  }
  const text = await response.text();
  return text ? (JSON.parse(text) as unknown) : {};
}

export class WebhookFenceDriver implements FenceDriver {
  readonly name = "webhook";

  async powerOff(target: FenceTarget, signal?: AbortSignal): Promise<void> {
    await call(target, "POST", "power-off", signal);
  }

  async powerOn(target: FenceTarget, signal?: AbortSignal): Promise<void> {
    await call(target, "POST", "power-on", signal);
  }

  async powerState(target: FenceTarget, signal?: AbortSignal): Promise<PowerState> {
    const body = (await call(target, "GET", "power-state", signal)) as { state?: unknown };
    return body.state === "on" || body.state === "off" ? body.state : "unknown";
  }
}
