// The dead-man's switch's bookkeeping on the node: each applied fault is written to the agent's
// state directory (a hostPath) before it is applied, with its deadline, and a timer reverts it
// then. A restarted agent reads the directory back: what is past due is reverted at once, the
// rest re-armed. (The systemd timer of node-ops.ts backs this up when the agent itself is gone.)
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AGENT_ACTIONS, type AgentAction } from "./protocol.js";

/** One fault as the node keeps it. */
export interface NodeFault {
  action: AgentAction;
  /** The request (ConfigMap name) and the id of the request that applied it. */
  request: string;
  id: string;
  /** ISO 8601. */
  deadline: string;
}

/** The clock and timers deadline keeping uses (a fake in unit tests). */
export interface Clock {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (run, ms) => setTimeout(run, ms),
  clearTimeout: (handle) => {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/** The faults whose deadline is at or before `nowMs` (to revert at once), and the others. */
export function splitDue(
  faults: readonly NodeFault[],
  nowMs: number,
): { due: NodeFault[]; pending: NodeFault[] } {
  const due: NodeFault[] = [];
  const pending: NodeFault[] = [];
  for (const fault of faults) (Date.parse(fault.deadline) <= nowMs ? due : pending).push(fault);
  return { due, pending };
}

/** Faults on disk, one JSON file per action (a node holds at most one fault of each action). */
export class NodeFaultStore {
  readonly #dir: string;

  constructor(stateDir: string) {
    this.#dir = join(stateDir, "faults");
    mkdirSync(this.#dir, { recursive: true });
  }

  /** Written (atomically) before the fault is applied, so a crash mid-apply still reverts. */
  save(fault: NodeFault): void {
    const file = join(this.#dir, `${fault.action}.json`);
    writeFileSync(`${file}.tmp`, JSON.stringify(fault));
    renameSync(`${file}.tmp`, file);
  }

  remove(action: AgentAction): void {
    rmSync(join(this.#dir, `${action}.json`), { force: true });
  }

  get(action: AgentAction): NodeFault | undefined {
    return this.all().find((fault) => fault.action === action);
  }

  /** Every fault kept; a file that does not parse is kept as due now (reverting is harmless). */
  all(): NodeFault[] {
    const faults: NodeFault[] = [];
    for (const file of readdirSync(this.#dir)) {
      const action = file.replace(/\.json$/, "") as AgentAction;
      if (!file.endsWith(".json") || !AGENT_ACTIONS.includes(action)) continue;
      try {
        const parsed = JSON.parse(readFileSync(join(this.#dir, file), "utf8")) as Partial<NodeFault>;
        if (typeof parsed.deadline !== "string" || Number.isNaN(Date.parse(parsed.deadline)))
          throw new Error("no deadline");
        faults.push({
          action,
          request: parsed.request ?? "",
          id: parsed.id ?? "",
          deadline: parsed.deadline,
        });
      } catch {
        faults.push({ action, request: "", id: "", deadline: new Date(0).toISOString() });
      }
    }
    return faults;
  }
}

/** One timer per action: `onDue(fault)` at its deadline unless disarmed first. */
export class DeadlineTimers {
  readonly #clock: Clock;
  readonly #onDue: (fault: NodeFault) => void;
  readonly #timers = new Map<AgentAction, unknown>();

  constructor(onDue: (fault: NodeFault) => void, clock: Clock = systemClock) {
    this.#onDue = onDue;
    this.#clock = clock;
  }

  arm(fault: NodeFault): void {
    this.disarm(fault.action);
    const inMs = Math.max(0, Date.parse(fault.deadline) - this.#clock.now());
    this.#timers.set(
      fault.action,
      this.#clock.setTimeout(() => {
        this.#timers.delete(fault.action);
        this.#onDue(fault);
      }, inMs),
    );
  }

  disarm(action: AgentAction): void {
    const handle = this.#timers.get(action);
    if (handle !== undefined) this.#clock.clearTimeout(handle);
    this.#timers.delete(action);
  }

  armed(): AgentAction[] {
    return [...this.#timers.keys()];
  }

  disarmAll(): void {
    for (const action of this.armed()) this.disarm(action);
  }
}
