// Connections kept and reused between API calls. client-node (1.4) builds a new agent for every
// request (KubeConfig.applySecurityAuthentication), so every call opened a new TCP connection and
// TLS session and parsed the CA bundle again. In a zone outage of 334 nodes that was about 2 s of
// the controller's CPU in 15 s, and each hold's Event write waited for its own handshake on a
// loaded API server (bench:controller, CPU profile, 2026-11-29). Here each plain http(s).Agent a
// request comes with is swapped for one keep-alive agent per set of TLS options.
import { createHash } from "node:crypto";
import http from "node:http";
import https from "node:https";

/** How long an idle connection is kept (Node's own global agent keeps one 5 s). */
const IDLE_MS = 5_000;
/** TLS option sets remembered; past this (credentials rotated often) the oldest is dropped. */
const MAX_AGENTS = 8;

type Agent = http.Agent | https.Agent;

/** The options of an https.Agent that decide who it talks to and as whom. */
const TLS_IDENTITY = ["ca", "cert", "key", "pfx", "passphrase", "rejectUnauthorized", "servername"] as const;

function identityOf(options: https.AgentOptions): string {
  const hash = createHash("sha256");
  for (const name of TLS_IDENTITY) {
    const value: unknown = options[name];
    hash.update(`${name}:`);
    for (const part of Array.isArray(value) ? value : [value]) {
      if (Buffer.isBuffer(part) || typeof part === "string") hash.update(part);
      else hash.update(JSON.stringify(part ?? null));
      hash.update("\0");
    }
  }
  return hash.digest("hex");
}

export class SharedAgents {
  readonly #agents = new Map<string, Agent>();

  /**
   * The keep-alive agent to send through instead of `agent`: one per protocol and TLS options.
   * Any other agent (a proxy's) is kept as it is.
   */
  shared(agent: Agent | undefined): Agent | undefined {
    if (agent?.constructor === https.Agent) {
      const options = agent.options;
      return this.#agent(`https:${identityOf(options)}`, () => new https.Agent(this.#keepAlive(options)));
    }
    if (agent?.constructor === http.Agent) {
      return this.#agent("http", () => new http.Agent({ keepAlive: true, timeout: IDLE_MS }));
    }
    return agent;
  }

  /** Closes every kept connection (the owner stops; requests still under way end with theirs). */
  destroy(): void {
    for (const agent of this.#agents.values()) agent.destroy();
    this.#agents.clear();
  }

  #keepAlive(options: https.AgentOptions): https.AgentOptions {
    return { ...options, keepAlive: true, timeout: IDLE_MS };
  }

  #agent(key: string, make: () => Agent): Agent {
    const known = this.#agents.get(key);
    if (known) return known;
    const made = make();
    this.#agents.set(key, made);
    if (this.#agents.size > MAX_AGENTS) {
      // Dropped, not destroyed: a request may still be under way on it; its idle sockets close.
      const [oldest] = this.#agents.keys();
      if (oldest !== undefined) this.#agents.delete(oldest);
    }
    return made;
  }
}
