// Fencing with the ClusterLabs fence agents (Debian's fence-agents): runs `fence_<agent>` with its
// parameters on stdin (key=value lines, so no secret shows in a process list). Options: agent
// (e.g. fence_redfish) plus any agent parameter (ip, ipport, systems_uri, ssl_insecure…);
// credentials username/password from the Secret. Status exit codes: 0 on, 2 off, 1 failure.
import { execa } from "execa";
import { RekindleError } from "../../errors.js";
import type { FenceDriver, FenceTarget, PowerState } from "./types.js";

const AGENT_NAME = /^fence_[a-z0-9_]+$/;

export function agentInput(target: FenceTarget, action: "on" | "off" | "status"): string {
  const params: Record<string, string> = { ...target.options, ...target.credentials, action };
  delete params["agent"];
  return `${Object.entries(params)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n")}\n`;
}

export class FenceAgentDriver implements FenceDriver {
  readonly name = "fence-agent";
  readonly #searchPath: string;

  /** `searchPath`: where the agents live. Default "/usr/sbin:/usr/bin:$PATH". */
  constructor(searchPath = `/usr/sbin:/usr/bin:${process.env["PATH"] ?? ""}`) {
    this.#searchPath = searchPath;
  }

  async #run(target: FenceTarget, action: "on" | "off" | "status"): Promise<number> {
    const agent = target.options["agent"] ?? "";
    if (!AGENT_NAME.test(agent))
      throw RekindleError.invalidInput(
        "fence agent",
        agent,
        "a ClusterLabs agent name such as fence_redfish or fence_ipmilan",
      );
    const result = await execa(agent, [], {
      input: agentInput(target, action),
      reject: false,
      timeout: 60_000,
      env: { PATH: this.#searchPath },
      all: true,
    });
    if (result.failed && result.exitCode === undefined) {
      throw new RekindleError(
        "COMMAND_FAILED",
        `${agent} could not be run (is Debian's fence-agents installed?)`,
        { details: { outputTail: result.all } },
      );
    }
    const code = result.exitCode ?? 1;
    if (action !== "status" && code !== 0) {
      throw new RekindleError(
        "COMMAND_FAILED",
        `${agent} action=${action} for ${target.node} exited ${code}`,
        { details: { outputTail: result.all.slice(-2000) } },
      );
    }
    return code;
  }

  async powerOff(target: FenceTarget): Promise<void> {
    await this.#run(target, "off");
  }

  async powerOn(target: FenceTarget): Promise<void> {
    await this.#run(target, "on");
  }

  async powerState(target: FenceTarget): Promise<PowerState> {
    const code = await this.#run(target, "status");
    return code === 0 ? "on" : code === 2 ? "off" : "unknown";
  }
}
