// Fencing through a BMC's Redfish API over HTTPS: ComputerSystem.Reset ForceOff / On, confirmed by
// the system's PowerState. Options: url (https://bmc), system (Systems member id or Name; default
// the node name), insecure ("true" to skip certificate checks) or caFile. Credentials: username,
// password (HTTP basic auth), from the template's Secret.
import { readFileSync } from "node:fs";
import { RekindleError } from "../../errors.js";
import { httpRequest, type RequestOptions } from "../../util/http.js";
import type { FenceDriver, FenceTarget, PowerState } from "./types.js";

interface SystemCollection {
  Members?: { "@odata.id": string }[];
}

interface ComputerSystem {
  Id?: string;
  Name?: string;
  PowerState?: string;
}

function requestOptions(target: FenceTarget): RequestOptions {
  const { username, password } = target.credentials;
  const caFile = target.options["caFile"];
  return {
    timeoutMs: 10_000,
    ...(target.options["insecure"] === "true" ? { insecure: true } : {}),
    ...(caFile ? { ca: readFileSync(caFile) } : {}),
    ...(username !== undefined && password !== undefined ? { basicAuth: { username, password } } : {}),
  };
}

async function getJson<T>(target: FenceTarget, path: string): Promise<T> {
  const base = target.options["url"] ?? "";
  const response = await httpRequest("GET", new URL(path, base).toString(), requestOptions(target));
  if (response.status !== 200) {
    throw new RekindleError(
      "COMMAND_FAILED",
      `Redfish GET ${path} at ${base} for ${target.node} answered ${response.status}`,
    );
  }
  return JSON.parse(response.body) as T;
}

export class RedfishFenceDriver implements FenceDriver {
  readonly name = "redfish";

  /** The node's Systems member: by id when the option names one, else by Name. */
  async #systemPath(target: FenceTarget): Promise<string> {
    if (!target.options["url"]?.startsWith("https://") && target.options["allowHttp"] !== "true") {
      throw new RekindleError(
        "INVALID_INPUT",
        `redfish fence template for ${target.node} needs an https:// url`,
        {
          hint: 'BMC credentials travel with every request: use HTTPS (or allowHttp: "true" for a lab)',
        },
      );
    }
    const wanted = target.options["system"] ?? target.node;
    const collection = await getJson<SystemCollection>(target, "/redfish/v1/Systems");
    for (const member of collection.Members ?? []) {
      const path = member["@odata.id"];
      if (path.endsWith(`/${wanted}`)) return path;
      const system = await getJson<ComputerSystem>(target, path);
      if (system.Name === wanted || system.Id === wanted) return path;
    }
    throw new RekindleError(
      "NOT_FOUND",
      `no Redfish system "${wanted}" at ${target.options["url"] ?? ""} for node ${target.node}`,
    );
  }

  async #reset(target: FenceTarget, resetType: "ForceOff" | "On"): Promise<void> {
    const path = await this.#systemPath(target);
    const url = new URL(`${path}/Actions/ComputerSystem.Reset`, target.options["url"]).toString();
    const response = await httpRequest("POST", url, {
      ...requestOptions(target),
      json: { ResetType: resetType },
    });
    if (response.status < 200 || response.status >= 300) {
      throw new RekindleError(
        "COMMAND_FAILED",
        `Redfish ${resetType} of ${target.node} answered ${response.status}: ${response.body.slice(0, 200)}`,
      );
    }
  }

  async powerOff(target: FenceTarget): Promise<void> {
    await this.#reset(target, "ForceOff");
  }

  async powerOn(target: FenceTarget): Promise<void> {
    await this.#reset(target, "On");
  }

  async powerState(target: FenceTarget): Promise<PowerState> {
    const system = await getJson<ComputerSystem>(target, await this.#systemPath(target));
    return system.PowerState === "Off" ? "off" : system.PowerState === "On" ? "on" : "unknown";
  }
}
