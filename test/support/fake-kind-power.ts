// A stand-in for the kind power webhook's node driver and its requests, shared by the webhook's
// unit tests (kind-power-webhook*.test.ts).
import type { PowerRequest } from "../../lib/cluster/kind/power-webhook/handler.js";
import type { FenceDriver, FenceTarget, PowerState } from "../../lib/controller/drivers/types.js";
import { RekindleError } from "../../lib/errors.js";
import type { Progress } from "../../lib/util/progress.js";

export const CLUSTER = "kind-test";
export const TOKEN = "s3cret-token";

/**
 * Nodes of CLUSTER in memory, as strict as an engine: stopping a stopped container or starting a
 * started one fails (dockerode's 304), and each call takes a moment, so races would show.
 */
export class FakeKindDriver implements FenceDriver {
  readonly name = "fake-docker";
  readonly calls: string[] = [];
  readonly states = new Map<string, "on" | "off">([
    [`${CLUSTER}-worker`, "on"],
    [`${CLUSTER}-worker2`, "on"],
  ]);
  failWith: Error | undefined;
  stateCalls = 0;

  async #node(target: FenceTarget): Promise<"on" | "off"> {
    await new Promise((resolve) => setTimeout(resolve, 10));
    if (this.failWith) throw this.failWith;
    const state = this.states.get(target.node);
    if (target.options["cluster"] !== CLUSTER || state === undefined) {
      throw new RekindleError("NOT_FOUND", `no container "${target.node}"`);
    }
    return state;
  }

  async powerOff(target: FenceTarget): Promise<void> {
    this.calls.push(`off ${target.node}`);
    if ((await this.#node(target)) === "off") throw new Error("container already stopped");
    this.states.set(target.node, "off");
  }

  async powerOn(target: FenceTarget): Promise<void> {
    this.calls.push(`on ${target.node}`);
    if ((await this.#node(target)) === "on") throw new Error("container already started");
    this.states.set(target.node, "on");
  }

  async powerState(target: FenceTarget): Promise<PowerState> {
    this.stateCalls += 1;
    return this.#node(target);
  }
}

export function recordingProgress(): Progress & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info(message) {
      lines.push(message);
    },
    phase() {
      return { update: () => undefined, end: () => 0 };
    },
  };
}

export const auth = `Bearer ${TOKEN}`;
export const post = (
  path: string,
  body: unknown,
  authorization: string | undefined = auth,
): PowerRequest => ({
  method: "POST",
  url: path,
  authorization,
  body: typeof body === "string" ? body : JSON.stringify(body),
});
export const get = (url: string, authorization: string | undefined = auth): PowerRequest => ({
  method: "GET",
  url,
  authorization,
  body: "",
});
