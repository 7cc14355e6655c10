// Fencing with the ClusterLabs fence agents (Debian's fence-agents): runs `fence_<agent>` with its
// parameters on stdin (key=value lines, so no secret shows in a process list). Options: agent
// (e.g. fence_redfish) plus any agent parameter (ip, ipport, systems_uri, ssl_insecure…);
// credentials (e.g. username, password) from the Secret, each key passed as a parameter. Status
// exit codes: 0 on, 2 off, 1 failure. The agent reads one parameter a line and strips each line, so
// a name must be a plain word and a value may hold no control character (a newline would start a
// parameter of its own) nor surrounding whitespace; both are refused. An agent that is not installed
// where the driver looks is refused at start, not found missing at the first node loss.
import { accessSync, constants, statSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { RekindleError } from "../../errors.js";
import { assertValidTarget, hasControlCharacter } from "./target-check.js";
import type { FenceDriver, FenceDriverSpec, FenceTarget, PowerState } from "./types.js";

const AGENT_NAME = /^fence_[a-z0-9_]+$/;
/** A fence agent parameter name (fencing.py accepts both - and _ spellings). */
const PARAMETER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
/** Set by the driver for each call; a template or Secret may not choose it. */
const RESERVED_PARAMETERS = ["action"];
/** How long one agent run may take before it is stopped. */
const AGENT_TIMEOUT_MS = 60_000;
/** How long a stopped agent (SIGTERM) gets before its process group is killed (SIGKILL). */
const AGENT_KILL_GRACE_MS = 5_000;

/** Signals the process group `pid` leads (an agent started detached); one already gone is fine. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group has ended.
  }
}

function parameterProblems(kind: "option" | "credential", name: string, value: string): string[] {
  const problems: string[] = [];
  if (!PARAMETER_NAME.test(name)) {
    problems.push(`${kind} name ${JSON.stringify(name)} is not a fence agent parameter name ([A-Za-z0-9_-])`);
  } else if (RESERVED_PARAMETERS.includes(name)) {
    problems.push(`${kind} ${name} is set by the controller, not by the fence configuration`);
  }
  // Credentials are never echoed: only their key is named.
  const shown = kind === "option" ? ` (${JSON.stringify(value)})` : "";
  if (hasControlCharacter(value)) {
    problems.push(
      `${kind} ${name}${shown} holds a newline or other control character: the agent reads one parameter a line`,
    );
  } else if (value !== value.trim()) {
    problems.push(`${kind} ${name}${shown} has surrounding whitespace, which the agent strips`);
  }
  return problems;
}

export const FENCE_AGENT_SPEC: FenceDriverSpec = {
  options: {
    agent: {
      required: true,
      valid: "a ClusterLabs agent name such as fence_redfish or fence_ipmilan",
      test: (v) => AGENT_NAME.test(v),
    },
  },
  passThroughOptions: true,
  checkTarget: (target) => [
    ...Object.entries(target.options)
      .filter(([name]) => name !== "agent")
      .flatMap(([name, value]) => parameterProblems("option", name, value)),
    ...Object.entries(target.credentials).flatMap(([name, value]) =>
      parameterProblems("credential", name, value),
    ),
  ],
};

/** The executable file `agent` in the first directory of `searchPath` (":"-separated) holding one. */
export function findAgent(agent: string, searchPath: string): string | undefined {
  for (const dir of searchPath.split(":").filter((d) => d !== "")) {
    const path = join(dir, agent);
    try {
      if (!statSync(path).isFile()) continue;
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // Not there, or not executable: the next directory.
    }
  }
  return undefined;
}

/** FENCE_AGENT_SPEC plus the check that each template's agent is installed in `searchPath`. */
function installedAgentSpec(searchPath: string): FenceDriverSpec {
  const dirs = [...new Set(searchPath.split(":").filter((d) => d !== ""))];
  return {
    ...FENCE_AGENT_SPEC,
    checkTarget: (target) => {
      const problems = FENCE_AGENT_SPEC.checkTarget?.(target) ?? [];
      const agent = target.options["agent"] ?? "";
      if (AGENT_NAME.test(agent) && findAgent(agent, searchPath) === undefined) {
        problems.push(
          `fence agent ${agent} is not installed: no executable ${agent} in ${dirs.join(", ")} (Debian's fence-agents package installs them in /usr/sbin; the controller image carries none)`,
        );
      }
      return problems;
    },
  };
}

/**
 * The agent's stdin: one key=value line per option (but `agent`) and credential, then the action.
 * Throws INVALID_INPUT when a name or value could break out of its line.
 */
export function agentInput(target: FenceTarget, action: "on" | "off" | "status"): string {
  assertValidTarget({ name: "fence-agent", spec: FENCE_AGENT_SPEC }, target);
  const params: Record<string, string> = { ...target.options, ...target.credentials, action };
  delete params["agent"];
  return `${Object.entries(params)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n")}\n`;
}

export class FenceAgentDriver implements FenceDriver {
  readonly name = "fence-agent";
  readonly spec: FenceDriverSpec;
  readonly #searchPath: string;

  /**
   * `searchPath`: where the agents live. Default "/usr/sbin:/usr/bin:$PATH". A template whose agent
   * is not an executable file there is refused by the start-up check.
   */
  constructor(searchPath = `/usr/sbin:/usr/bin:${process.env["PATH"] ?? ""}`) {
    this.#searchPath = searchPath;
    this.spec = installedAgentSpec(searchPath);
  }

  async #run(target: FenceTarget, action: "on" | "off" | "status", signal?: AbortSignal): Promise<number> {
    const agent = target.options["agent"] ?? "";
    if (!AGENT_NAME.test(agent))
      throw RekindleError.invalidInput(
        "fence agent",
        agent,
        "a ClusterLabs agent name such as fence_redfish or fence_ipmilan",
      );
    const input = agentInput(target, action);
    if (signal?.aborted) {
      throw new RekindleError("ABORTED", `${agent} action=${action} for ${target.node} aborted`, {
        cause: signal.reason,
      });
    }
    // Its own process group, so a stop reaches whatever the agent started too (ipmitool, ssh…):
    // one left behind would hold the output pipes open, and the call would not end.
    const subprocess = execa(agent, [], {
      input,
      reject: false,
      detached: true,
      env: { PATH: this.#searchPath },
      all: true,
    });
    let stoppedBy: "abort" | "timeout" | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    const stop = (why: "abort" | "timeout") => {
      if (stoppedBy) return;
      stoppedBy = why;
      killGroup(subprocess.pid, "SIGTERM");
      killTimer = setTimeout(() => {
        killGroup(subprocess.pid, "SIGKILL");
      }, AGENT_KILL_GRACE_MS);
    };
    const onAbort = () => {
      stop("abort");
    };
    const timeoutTimer = setTimeout(() => {
      stop("timeout");
    }, AGENT_TIMEOUT_MS);
    signal?.addEventListener("abort", onAbort, { once: true });
    let result: Awaited<typeof subprocess>;
    try {
      result = await subprocess;
    } finally {
      clearTimeout(timeoutTimer);
      clearTimeout(killTimer);
      signal?.removeEventListener("abort", onAbort);
    }
    if (stoppedBy === "abort") {
      throw new RekindleError("ABORTED", `${agent} action=${action} for ${target.node} aborted`, {
        cause: signal?.reason,
        details: { outputTail: result.all.slice(-2000) },
      });
    }
    if (stoppedBy === "timeout") {
      throw new RekindleError(
        "TIMEOUT",
        `${agent} action=${action} for ${target.node} ran longer than ${AGENT_TIMEOUT_MS} ms and was killed`,
        { details: { outputTail: result.all.slice(-2000) } },
      );
    }
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

  async powerOff(target: FenceTarget, signal?: AbortSignal): Promise<void> {
    await this.#run(target, "off", signal);
  }

  async powerOn(target: FenceTarget, signal?: AbortSignal): Promise<void> {
    await this.#run(target, "on", signal);
  }

  async powerState(target: FenceTarget, signal?: AbortSignal): Promise<PowerState> {
    const code = await this.#run(target, "status", signal);
    return code === 0 ? "on" : code === 2 ? "off" : "unknown";
  }
}
