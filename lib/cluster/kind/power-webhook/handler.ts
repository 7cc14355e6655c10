// The request logic of the kind power webhook, apart from sockets and TLS: routes, bearer auth,
// request validation, and power actions serialised per node so that repeated or concurrent calls
// are idempotent. It answers exactly what the controller's webhook driver
// (lib/controller/drivers/webhook.ts) sends and reads. Told to lie (bmc-lies.ts), it answers
// "off" to every power read of a node, or acknowledges its power-off and does nothing.
import { createHash, timingSafeEqual } from "node:crypto";
import { errorMessage, RekindleError } from "../../../errors.js";
import {
  hasPowerOn,
  type FenceDriver,
  type FenceTarget,
  type PowerState,
} from "../../../controller/drivers/types.js";
import type { Progress } from "../../../util/progress.js";
import { BmcLies } from "../../bmc-lies.js";

/** One HTTP request, as the server read it. */
export interface PowerRequest {
  method: string;
  /** The request target: path and query ("/power-state?node=x"). */
  url: string;
  /** The Authorization header, if any. */
  authorization: string | undefined;
  /** The request body (JSON for the POSTs). */
  body: string;
}

export interface PowerResponse {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export interface PowerRequestHandlerOptions {
  /** The kind cluster whose nodes this service powers; any other node name is 404. */
  cluster: string;
  /** The bearer token callers must present. */
  token: string;
  /** Powers the nodes; called with `{ cluster }` as its options. */
  driver: FenceDriver;
  /** Receives one line per power action and per refused caller. */
  progress: Progress;
  /**
   * The node names it may power (404 for the rest), asked at each request. Default: every node
   * the driver finds. The server passes the cluster's workers: a control plane is never fenced.
   */
  powerableNodes?: () => Promise<readonly string[]>;
  /** What each node's BMC lies about, read at every request. Default: none lies. */
  lies?: BmcLies;
}

type Action = "power-off" | "power-on";

/** The routes and their one allowed method each. */
const ROUTES: Readonly<Record<string, "GET" | "POST">> = {
  "/power-off": "POST",
  "/power-on": "POST",
  "/power-state": "GET",
};

/** Kubernetes node names are DNS subdomains (and kind's container names follow them). */
const NODE_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

function json(
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): PowerResponse {
  return { status, headers: { "content-type": "application/json", ...headers }, body };
}

/** SHA-256 first, so both sides have one length and the comparison time says nothing about the token. */
function sameToken(presented: string, expected: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? "");
  return match?.[1];
}

/** The node named in a GET's query, or the reason there is none. */
function nodeFromQuery(url: URL): { node: string } | { problem: string } {
  const node = url.searchParams.get("node");
  return node === null
    ? { problem: "the query has no node parameter; expected ?node=<node name>" }
    : { node };
}

/** The node named in a POST's JSON body, or the reason there is none. */
function nodeFromBody(body: string): { node: string } | { problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { problem: 'the body is not JSON; expected {"node": "<node name>"}' };
  }
  const node: unknown =
    typeof parsed === "object" && parsed !== null ? (parsed as { node?: unknown }).node : undefined;
  return typeof node === "string"
    ? { node }
    : { problem: 'the body has no "node" string; expected {"node": "<node name>"}' };
}

export class PowerRequestHandler {
  readonly #options: PowerRequestHandlerOptions;
  /** The tail of each node's queue of power actions (settled, never rejected). */
  readonly #queues = new Map<string, Promise<unknown>>();
  readonly #inFlight = new Set<Promise<PowerResponse>>();
  #draining = false;
  readonly #lies: BmcLies;

  constructor(options: PowerRequestHandlerOptions) {
    this.#options = options;
    this.#lies = options.lies ?? new BmcLies();
  }

  /** The node's power as this BMC answers it: the driver's, unless it lies. */
  async #powerState(target: FenceTarget): Promise<PowerState> {
    if (this.#lies.of(target.node).powerReadsOff) return "off";
    return this.#options.driver.powerState(target);
  }

  /** Answers one request; never rejects (an engine failure is a 500 naming it). 503 once draining. */
  async handle(request: PowerRequest): Promise<PowerResponse> {
    if (this.#draining) return json(503, { error: "the kind power webhook is shutting down" });
    const answer = this.#handle(request);
    this.#inFlight.add(answer);
    try {
      return await answer;
    } finally {
      this.#inFlight.delete(answer);
    }
  }

  /** Refuses new requests (503) and resolves once every request under way has its answer. */
  async drain(): Promise<void> {
    this.#draining = true;
    await Promise.all(this.#inFlight);
  }

  async #handle(request: PowerRequest): Promise<PowerResponse> {
    const url = new URL(request.url, "https://power-webhook.invalid");
    const allowed = ROUTES[url.pathname];
    if (allowed === undefined) {
      return json(404, { error: `no such path ${url.pathname}; valid: ${Object.keys(ROUTES).join(", ")}` });
    }
    if (request.method !== allowed) {
      return json(
        405,
        { error: `${url.pathname} takes ${allowed}, not ${request.method}` },
        { allow: allowed },
      );
    }
    const presented = bearerToken(request.authorization);
    if (presented === undefined || !sameToken(presented, this.#options.token)) {
      this.#options.progress.info(
        `kind power webhook: refused ${request.method} ${url.pathname} (${presented === undefined ? "no bearer token" : "wrong token"})`,
      );
      return json(
        401,
        { error: "a valid bearer token is required" },
        { "www-authenticate": 'Bearer realm="rekindle"' },
      );
    }
    const named = allowed === "GET" ? nodeFromQuery(url) : nodeFromBody(request.body);
    if ("problem" in named) return json(400, { error: named.problem });
    if (!NODE_NAME.test(named.node)) {
      return json(400, { error: `${JSON.stringify(named.node)} is not a node name (a DNS subdomain)` });
    }
    const powerable = await this.#options.powerableNodes?.();
    if (powerable !== undefined && !powerable.includes(named.node)) {
      return json(404, {
        error: `no worker node "${named.node}" in kind cluster ${this.#options.cluster}; workers: ${powerable.join(", ") || "none"}`,
      });
    }
    const target: FenceTarget = {
      node: named.node,
      options: { cluster: this.#options.cluster },
      credentials: {},
    };
    try {
      if (url.pathname === "/power-state") {
        return json(200, { node: target.node, state: await this.#powerState(target) });
      }
      const action: Action = url.pathname === "/power-off" ? "power-off" : "power-on";
      return json(200, {
        node: target.node,
        ...(await this.#serialised(target.node, () => this.#act(action, target))),
      });
    } catch (error) {
      if (error instanceof RekindleError && error.code === "NOT_FOUND") {
        return json(404, { error: `no node "${target.node}" in kind cluster ${this.#options.cluster}` });
      }
      if (error instanceof RekindleError && error.code === "UNSUPPORTED") {
        return json(501, { error: error.message });
      }
      const message = errorMessage(error);
      this.#options.progress.info(
        `kind power webhook: ${request.method} ${url.pathname} ${target.node} failed: ${message}`,
      );
      return json(500, { error: message });
    }
  }

  /** Checks the state first, so a repeated call changes nothing and says so. */
  async #act(action: Action, target: FenceTarget): Promise<{ state: PowerState; changed: boolean }> {
    const { driver, progress } = this.#options;
    const wanted = action === "power-off" ? "off" : "on";
    const before = await this.#powerState(target);
    if (before === wanted) {
      progress.info(`kind power webhook: ${action} ${target.node}: already ${wanted}`);
      return { state: wanted, changed: false };
    }
    if (action === "power-off" && this.#lies.of(target.node).powerOffNoop) {
      progress.info(`kind power webhook: ${action} ${target.node}: acknowledged, not done (its BMC lies)`);
      return { state: wanted, changed: true };
    }
    if (action === "power-off") await driver.powerOff(target);
    else if (hasPowerOn(driver)) await driver.powerOn(target);
    else throw new RekindleError("UNSUPPORTED", `fence driver ${driver.name} cannot power nodes on`);
    progress.info(`kind power webhook: ${action} ${target.node}: done (was ${before})`);
    return { state: wanted, changed: true };
  }

  /** Runs `work` after every earlier action on `node` settled: two stops never race for one container. */
  async #serialised<T>(node: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#queues.get(node) ?? Promise.resolve();
    const result = previous.then(work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#queues.set(node, tail);
    void tail.then(() => {
      if (this.#queues.get(node) === tail) this.#queues.delete(node);
    });
    return result;
  }
}
