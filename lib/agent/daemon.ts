// The agent as it runs in its pod on a node: it reads the requests for its node from the API
// server, applies and reverts faults with the node's own tools (node-ops.ts), answers in each
// request, and reverts every fault at its deadline by itself (deadline.ts), whatever the API
// server says or not. One operation at a time: a deadline and a request never interleave.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { errorMessage } from "../errors.js";
import { isNotFound, k8s } from "../kube/client.js";
import {
  DeadlineTimers,
  NodeFaultStore,
  splitDue,
  systemClock,
  type Clock,
  type NodeFault,
} from "./deadline.js";
import {
  applyScript,
  armBackstopScript,
  disarmBackstopScript,
  revertScript,
  revertScriptPath,
  type HostShell,
} from "./node-ops.js";
import { watchRequests } from "./request-wake.js";
import {
  decodeRequest,
  decodeStatus,
  encodeStatus,
  REQUEST_LABEL,
  type AgentAction,
  type AgentRequest,
  type AgentStatus,
} from "./protocol.js";

export interface AgentDaemonOptions {
  kc: k8s.KubeConfig;
  /** The node this agent runs on (the pod's spec.nodeName). */
  node: string;
  namespace: string;
  /** The hostPath the faults are kept in; the same path on the node (revert scripts run there). */
  stateDir: string;
  shell: HostShell;
  /** The agent's own pod UID: a node loss kills every pod's containers but this one's. */
  podUid?: string;
  clock?: Clock;
  /**
   * How often requests are listed even when the watch says nothing changed (it wakes the agent at
   * once when one does). Default 10 000 ms.
   */
  pollMs?: number;
  /** Watch the requests to act on a change at once. Default true (false: list every pollMs only). */
  watch?: boolean;
  /** The systemd backstop fires this long after the deadline (the agent reverts first). Default 5 s. */
  backstopGraceS?: number;
  log?: (line: string) => void;
}

export class AgentDaemon {
  readonly #o: AgentDaemonOptions;
  readonly #core: k8s.CoreV1Api;
  readonly #store: NodeFaultStore;
  readonly #timers: DeadlineTimers;
  readonly #clock: Clock;
  #queue: Promise<void> = Promise.resolve();

  constructor(options: AgentDaemonOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#core = options.kc.makeApiClient(k8s.CoreV1Api);
    mkdirSync(options.stateDir, { recursive: true });
    this.#store = new NodeFaultStore(options.stateDir);
    this.#timers = new DeadlineTimers(
      (fault) => void this.#serial(() => this.#atDeadline(fault)),
      this.#clock,
    );
  }

  #log(line: string): void {
    (this.#o.log ?? ((text: string) => process.stdout.write(`${new Date().toISOString()} ${text}\n`)))(line);
  }

  /** Runs `work` after everything queued before it; its failure is logged, not thrown. */
  #serial(work: () => Promise<void>): Promise<void> {
    this.#queue = this.#queue.then(work).catch((error: unknown) => {
      this.#log(`error: ${errorMessage(error)}`);
    });
    return this.#queue;
  }

  /** After a restart: past-due faults reverted now, the others' timers armed again. */
  async resume(): Promise<void> {
    const { due, pending } = splitDue(this.#store.all(), this.#clock.now());
    for (const fault of due) await this.#serial(() => this.#atDeadline(fault));
    for (const fault of pending) {
      this.#log(`resuming ${fault.action}: due ${fault.deadline}`);
      this.#timers.arm(fault);
    }
  }

  /** Lists requests and acts on this node's until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await this.resume();
    this.#log(`agent on ${this.#o.node} watching requests in ${this.#o.namespace}`);
    const wake =
      this.#o.watch === false
        ? undefined
        : watchRequests(this.#o.kc, this.#o.namespace, `${REQUEST_LABEL}=true`, (line) => {
            this.#log(line);
          });
    const stopWaking = () => wake?.stop();
    signal.addEventListener("abort", stopWaking, { once: true });
    const resyncMs = this.#o.pollMs ?? 10_000;
    while (!signal.aborted) {
      await this.#serial(() => this.pollOnce());
      if (wake) await wake.next(resyncMs);
      else await new Promise((resolve) => setTimeout(resolve, resyncMs));
    }
    wake?.stop();
    this.#timers.disarmAll();
    await this.#queue;
    // Stopped holding nothing (uninstalled, or restarted): nothing of the agent stays on the node.
    // A fault still held stays with its file and its systemd timer, for the next agent or the timer.
    if (this.#store.all().length === 0)
      await this.#o
        .shell(`rm -rf '${this.#o.stateDir}'`, "removing the agent's state directory")
        .catch(() => undefined);
  }

  /** One pass: every request for this node handled, and faults whose request is gone reverted. */
  async pollOnce(): Promise<void> {
    let items: k8s.V1ConfigMap[];
    try {
      items = (
        await this.#core.listNamespacedConfigMap({
          namespace: this.#o.namespace,
          labelSelector: `${REQUEST_LABEL}=true`,
        })
      ).items;
    } catch (error) {
      // The API server out of reach (a partition of this node, say): the deadlines still hold.
      this.#log(`cannot list requests: ${errorMessage(error)}`);
      return;
    }
    const mine = new Set<string>();
    for (const item of items) {
      let request: AgentRequest;
      try {
        request = decodeRequest(item);
      } catch (error) {
        this.#log(errorMessage(error));
        continue;
      }
      if (request.node !== this.#o.node) continue;
      mine.add(request.name);
      const status = decodeStatus(item);
      if (status?.answers === request.id) continue;
      await this.#handle(request);
    }
    for (const fault of this.#store.all()) {
      if (!mine.has(fault.request)) {
        this.#log(`${fault.action}: its request ${fault.request} is gone; reverting`);
        await this.#revert(fault.action);
      }
    }
  }

  async #handle(request: AgentRequest): Promise<void> {
    const answer = (state: AgentStatus["state"], message: string) =>
      this.#answer(request, {
        state,
        message,
        at: new Date(this.#clock.now()).toISOString(),
        answers: request.id,
      });
    if (request.desired === "reverted") {
      const message = this.#store.get(request.action)
        ? await this.#revert(request.action)
        : "was not applied";
      return answer("reverted", message);
    }
    if (Date.parse(request.deadline) <= this.#clock.now()) {
      if (this.#store.get(request.action)) await this.#revert(request.action);
      return answer("reverted", `its deadline ${request.deadline} has passed`);
    }
    let applied: string;
    try {
      applied = await this.#apply(request);
    } catch (error) {
      return answer("failed", errorMessage(error));
    }
    return answer("applied", applied);
  }

  /** Kept, backstop armed and timer set before the first side effect; undone when applying fails. */
  async #apply(request: AgentRequest): Promise<string> {
    const { action } = request;
    const fault: NodeFault = { action, request: request.name, id: request.id, deadline: request.deadline };
    const targets = action === "partition" ? await this.#apiServerTargets() : [];
    writeFileSync(revertScriptPath(action), `${revertScript(action)}\n`, { mode: 0o700 });
    this.#store.save(fault);
    this.#timers.arm(fault);
    const inSeconds =
      (Date.parse(request.deadline) - this.#clock.now()) / 1000 + (this.#o.backstopGraceS ?? 5);
    try {
      await this.#o.shell(
        armBackstopScript(action, inSeconds),
        `arming the node's revert timer for ${action}`,
      );
      const out = await this.#o.shell(applyScript(action, targets, this.#o.podUid ?? ""), action);
      this.#log(`${action} applied until ${request.deadline}: ${out}`);
      return `applied until ${request.deadline}${out ? `: ${out}` : ""}`;
    } catch (error) {
      await this.#revert(action).catch(() => undefined);
      throw error;
    }
  }

  /** Reverted, then forgotten (the backstop disarmed); a revert that fails keeps the fault for the next try. */
  async #revert(action: AgentAction): Promise<string> {
    const out = await this.#o.shell(revertScript(action), `reverting ${action}`);
    this.#timers.disarm(action);
    await this.#o.shell(disarmBackstopScript(action), `disarming the revert timer of ${action}`);
    this.#store.remove(action);
    rmSync(revertScriptPath(action), { force: true });
    this.#log(`${action} reverted`);
    return out === "" ? "reverted" : `reverted: ${out}`;
  }

  async #atDeadline(fault: NodeFault): Promise<void> {
    if (this.#store.get(fault.action)?.id !== fault.id && fault.id !== "") return;
    this.#log(`${fault.action}: deadline ${fault.deadline} reached`);
    try {
      await this.#revert(fault.action);
    } catch (error) {
      // Try again shortly: a fault must not outlive its deadline by more than the retries take.
      this.#log(`revert at the deadline failed, retrying in 5 s: ${errorMessage(error)}`);
      this.#timers.arm({ ...fault, deadline: new Date(this.#clock.now() + 5000).toISOString() });
      return;
    }
    if (fault.request !== "") {
      const at = new Date(this.#clock.now()).toISOString();
      await this.#answer(
        { name: fault.request },
        { state: "reverted", message: `reverted at its deadline ${fault.deadline}`, at, answers: fault.id },
      );
    }
  }

  /** The API server's addresses ("ip:port") as the `kubernetes` Service's endpoints name them. */
  async #apiServerTargets(): Promise<string[]> {
    const endpoints = await this.#core.readNamespacedEndpoints({ name: "kubernetes", namespace: "default" });
    const targets: string[] = [];
    for (const subset of endpoints.subsets ?? [])
      for (const address of subset.addresses ?? [])
        for (const port of subset.ports ?? []) targets.push(`${address.ip}:${port.port}`);
    return targets;
  }

  async #answer(request: Pick<AgentRequest, "name">, status: AgentStatus): Promise<void> {
    try {
      await this.#core.patchNamespacedConfigMap(
        { name: request.name, namespace: this.#o.namespace, body: { data: encodeStatus(status) } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
    } catch (error) {
      if (!isNotFound(error)) this.#log(`cannot answer ${request.name}: ${errorMessage(error)}`);
    }
  }
}
