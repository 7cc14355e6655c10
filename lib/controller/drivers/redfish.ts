// Fencing through a BMC's Redfish API over HTTPS: ComputerSystem.Reset ForceOff / On, confirmed by
// the system's PowerState. Options: url (https://bmc), system (Systems member id or Name; default
// the node name), insecure ("true" to skip certificate checks) or caFile, allowHttp ("true": a lab
// BMC without TLS), timeout (per request, default 10s). Credentials: username, password (HTTP basic
// auth), from the template's Secret, sent only to the url's own origin: a path or URL the BMC
// answers with that leads elsewhere is refused.
import { readFileSync } from "node:fs";
import { RekindleError } from "../../errors.js";
import { httpRequest, type RequestOptions } from "../../util/http.js";
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

interface SystemCollection {
  Members?: { "@odata.id"?: unknown }[];
}

interface ComputerSystem {
  Id?: string;
  Name?: string;
  PowerState?: string;
}

/** Default per-request timeout. */
const REDFISH_TIMEOUT_MS = 10_000;

export const REDFISH_SPEC: FenceDriverSpec = {
  options: {
    url: URL_OPTION,
    system: { valid: "the Systems member's Id or Name (default: the node name)" },
    insecure: BOOLEAN_OPTION,
    caFile: CA_FILE_OPTION,
    allowHttp: BOOLEAN_OPTION,
    timeout: TIMEOUT_OPTION,
  },
  requiredCredentials: ["username", "password"],
  checkTarget: (target) => [
    ...transportProblems(target),
    ...(target.options["insecure"] === "true" && target.options["caFile"] !== undefined
      ? ['set either insecure: "true" or caFile, not both']
      : []),
  ],
};

function requestOptions(target: FenceTarget, signal: AbortSignal | undefined): RequestOptions {
  const { username, password } = target.credentials;
  const caFile = target.options["caFile"];
  return {
    timeoutMs: timeoutOption(target, REDFISH_TIMEOUT_MS),
    ...(target.options["insecure"] === "true" ? { insecure: true } : {}),
    ...(caFile ? { ca: readFileSync(caFile) } : {}),
    ...(username !== undefined && password !== undefined ? { basicAuth: { username, password } } : {}),
    ...(signal ? { signal } : {}),
  };
}

/**
 * `reference` (a path such as an `@odata.id`, or an absolute URL from a response) resolved against
 * the BMC's url; refused unless it stays on that origin, where the credentials are meant to go.
 */
export function onBmcOrigin(target: FenceTarget, reference: unknown): URL {
  const base = new URL(target.options["url"] ?? "");
  let resolved: URL | undefined;
  try {
    resolved = typeof reference === "string" ? new URL(reference, base) : undefined;
  } catch {
    resolved = undefined;
  }
  if (resolved?.origin !== base.origin) {
    throw new RekindleError(
      "COMMAND_FAILED",
      `Redfish at ${base.origin} for ${target.node} pointed to ${JSON.stringify(reference)}, not a path on its own origin: refused (credentials go to ${base.origin} only)`,
    );
  }
  return resolved;
}

async function getJson<T>(target: FenceTarget, url: URL, signal: AbortSignal | undefined): Promise<T> {
  const response = await httpRequest("GET", url.toString(), requestOptions(target, signal));
  if (response.status !== 200) {
    throw new RekindleError(
      "COMMAND_FAILED",
      `Redfish GET ${url.pathname} at ${url.origin} for ${target.node} answered ${response.status}`,
    );
  }
  try {
    return JSON.parse(response.body) as T;
  } catch {
    throw new RekindleError(
      "COMMAND_FAILED",
      `Redfish GET ${url.pathname} at ${url.origin} for ${target.node} answered something other than JSON`,
    );
  }
}

export class RedfishFenceDriver implements FenceDriver {
  readonly name = "redfish";
  readonly spec = REDFISH_SPEC;

  /** The node's Systems member: by id when the option names one, else by Name. */
  async #systemUrl(target: FenceTarget, signal: AbortSignal | undefined): Promise<URL> {
    assertValidTarget(this, target);
    const wanted = target.options["system"] ?? target.node;
    const collection = await getJson<SystemCollection>(
      target,
      onBmcOrigin(target, "/redfish/v1/Systems"),
      signal,
    );
    for (const member of collection.Members ?? []) {
      const url = onBmcOrigin(target, member["@odata.id"]);
      if (url.pathname.replace(/\/$/, "").endsWith(`/${wanted}`)) return url;
      const system = await getJson<ComputerSystem>(target, url, signal);
      if (system.Name === wanted || system.Id === wanted) return url;
    }
    throw new RekindleError(
      "NOT_FOUND",
      `no Redfish system "${wanted}" at ${target.options["url"] ?? ""} for node ${target.node}`,
    );
  }

  async #reset(target: FenceTarget, resetType: "ForceOff" | "On", signal?: AbortSignal): Promise<void> {
    const system = await this.#systemUrl(target, signal);
    const url = onBmcOrigin(target, `${system.pathname.replace(/\/$/, "")}/Actions/ComputerSystem.Reset`);
    const response = await httpRequest("POST", url.toString(), {
      ...requestOptions(target, signal),
      json: { ResetType: resetType },
    });
    if (response.status < 200 || response.status >= 300) {
      throw new RekindleError(
        "COMMAND_FAILED",
        `Redfish ${resetType} of ${target.node} answered ${response.status}: ${response.body.slice(0, 200)}`,
      );
    }
  }

  async powerOff(target: FenceTarget, signal?: AbortSignal): Promise<void> {
    await this.#reset(target, "ForceOff", signal);
  }

  async powerOn(target: FenceTarget, signal?: AbortSignal): Promise<void> {
    await this.#reset(target, "On", signal);
  }

  async powerState(target: FenceTarget, signal?: AbortSignal): Promise<PowerState> {
    const system = await getJson<ComputerSystem>(target, await this.#systemUrl(target, signal), signal);
    return system.PowerState === "Off" ? "off" : system.PowerState === "On" ? "on" : "unknown";
  }
}
