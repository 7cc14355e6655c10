// Fencing through an HTTP service: POST {url}/power-off and /power-on with {"node": …}, GET
// {url}/power-state?node=… answering {"state": "on"|"off"}. Bearer token from the Secret's "token".
// Options: url (https:// unless allowHttp: "true", for a lab), caFile (PEM CA bundle to verify the
// service with), timeout (per request, default 10s).
import { readFileSync } from "node:fs";
import { RekindleError } from "../../errors.js";
import { httpRequest } from "../../util/http.js";
import {
  assertValidTarget,
  BOOLEAN_OPTION,
  CA_FILE_OPTION,
  TIMEOUT_OPTION,
  timeoutOption,
  transportProblems,
  URL_OPTION,
} from "./target-check.js";
import type { FenceDriver, FenceDriverSpec, FenceTarget, PowerState } from "./types.js";

/** Default per-request timeout. */
const WEBHOOK_TIMEOUT_MS = 10_000;

export const WEBHOOK_SPEC: FenceDriverSpec = {
  options: {
    url: URL_OPTION,
    caFile: CA_FILE_OPTION,
    allowHttp: BOOLEAN_OPTION,
    timeout: TIMEOUT_OPTION,
  },
  checkTarget: transportProblems,
};

async function call(
  driver: WebhookFenceDriver,
  target: FenceTarget,
  method: "GET" | "POST",
  path: string,
  signal?: AbortSignal,
): Promise<unknown> {
  assertValidTarget(driver, target);
  const base = target.options["url"] ?? "";
  const url = new URL(path, base.endsWith("/") ? base : `${base}/`);
  if (method === "GET") url.searchParams.set("node", target.node);
  const token = target.credentials["token"];
  const caFile = target.options["caFile"];
  const response = await httpRequest(method, url.toString(), {
    timeoutMs: timeoutOption(target, WEBHOOK_TIMEOUT_MS),
    ...(caFile ? { ca: readFileSync(caFile) } : {}),
    ...(token ? { bearerToken: token } : {}),
    ...(method === "POST" ? { json: { node: target.node } } : {}),
    ...(signal ? { signal } : {}),
  });
  if (response.status < 200 || response.status >= 300) {
    throw new RekindleError(
      "COMMAND_FAILED",
      `webhook ${method} ${url.pathname} for ${target.node} answered ${response.status}`,
    );
  }
  try {
    return response.body ? (JSON.parse(response.body) as unknown) : {};
  } catch {
    throw new RekindleError(
      "COMMAND_FAILED",
      `webhook ${method} ${url.pathname} for ${target.node} answered something other than JSON`,
    );
  }
}

export class WebhookFenceDriver implements FenceDriver {
  readonly name = "webhook";
  readonly spec = WEBHOOK_SPEC;

  async powerOff(target: FenceTarget, signal?: AbortSignal): Promise<void> {
    await call(this, target, "POST", "power-off", signal);
  }

  async powerOn(target: FenceTarget, signal?: AbortSignal): Promise<void> {
    await call(this, target, "POST", "power-on", signal);
  }

  async powerState(target: FenceTarget, signal?: AbortSignal): Promise<PowerState> {
    const body = (await call(this, target, "GET", "power-state", signal)) as { state?: unknown } | null;
    return body?.state === "on" || body?.state === "off" ? body.state : "unknown";
  }
}
