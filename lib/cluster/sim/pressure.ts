// Simulated kubelet eviction manager for one sim node under memory or disk pressure. KWOK has no
// eviction manager; this plays the kubelet's part (labelled simulated in reports): it reports the
// pressure condition, and while the signal stays below its threshold evicts one pod per monitoring
// interval in the kubelet's order, never a critical pod (system-node-critical DaemonSet pods,
// static and mirror pods), as the kubelet refuses those. After relief the condition stays True for
// the kubelet's evictionPressureTransitionPeriod. The node lifecycle controller (real) adds and
// removes the taint.
import { errorMessage } from "../../errors.js";
import { nextEvictionVictim, type StarvedResource } from "../../kube/eviction-order.js";
import type { k8s } from "../../kube/client.js";
import { podsOnNode } from "../../kube/queries.js";
import { sleep } from "../../util/time.js";
import type { EvictionSettings, PressureKind } from "../provider.js";
import { setNodeCondition, terminatePod } from "./kubelet-sim.js";

const SIGNALS: Readonly<
  Record<PressureKind, { condition: string; resource: StarvedResource; reason: string; message: string }>
> = {
  memory: {
    condition: "MemoryPressure",
    resource: "memory",
    reason: "KubeletHasInsufficientMemory",
    message: "kubelet has insufficient memory available",
  },
  disk: {
    condition: "DiskPressure",
    resource: "ephemeral-storage",
    reason: "KubeletHasDiskPressure",
    message: "kubelet has disk pressure",
  },
};

const RELIEVED = {
  memory: { reason: "KubeletHasSufficientMemory", message: "kubelet has sufficient memory available" },
  disk: { reason: "KubeletHasNoDiskPressure", message: "kubelet has no disk pressure" },
} as const;

export class SimEvictionManager implements AsyncDisposable {
  readonly #kc: k8s.KubeConfig;
  readonly #node: string;
  readonly #kind: PressureKind;
  readonly #settings: EvictionSettings;
  readonly #abort = new AbortController();
  #underPressure = true;
  #loop: Promise<void> | undefined;
  readonly #log: (message: string) => void;

  private constructor(
    kc: k8s.KubeConfig,
    node: string,
    kind: PressureKind,
    settings: EvictionSettings,
    log: (message: string) => void,
  ) {
    this.#kc = kc;
    this.#node = node;
    this.#kind = kind;
    this.#settings = settings;
    this.#log = log;
  }

  /** Reports the pressure condition and starts evicting. */
  static async start(
    kc: k8s.KubeConfig,
    node: string,
    kind: PressureKind,
    settings: EvictionSettings,
    log: (message: string) => void = () => undefined,
  ): Promise<SimEvictionManager> {
    const manager = new SimEvictionManager(kc, node, kind, settings, log);
    const signal = SIGNALS[kind];
    await setNodeCondition(kc, node, {
      type: signal.condition,
      status: "True",
      reason: signal.reason,
      message: signal.message,
    });
    manager.#loop = manager.#run();
    return manager;
  }

  /** The signal is back above its threshold: no more evictions; the condition clears after the transition period. */
  relieve(): void {
    this.#underPressure = false;
  }

  /** Stops at once, clearing the condition without waiting out the transition period. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
    await this.#clearCondition();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  /** Resolves when the condition has cleared after `relieve()` (or `stop()`). */
  async settled(): Promise<void> {
    await this.#loop;
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    try {
      while (this.#underPressure) {
        await this.#evictOne().catch((error: unknown) => {
          this.#log(`simulated eviction on ${this.#node} failed (retrying): ${errorMessage(error)}`);
        });
        await sleep(this.#settings.monitoringIntervalMs, signal);
      }
      await sleep(this.#settings.pressureTransitionPeriodMs, signal);
      await this.#clearCondition();
    } catch {
      // Aborted by stop(), which clears the condition itself.
    }
  }

  async #clearCondition(): Promise<void> {
    const signal = SIGNALS[this.#kind];
    await setNodeCondition(this.#kc, this.#node, {
      type: signal.condition,
      status: "False",
      ...RELIEVED[this.#kind],
    });
  }

  async #evictOne(): Promise<void> {
    const { resource, condition } = SIGNALS[this.#kind];
    const next = nextEvictionVictim(await podsOnNode(this.#kc, this.#node), resource);
    if (!next || !this.#underPressure) return;
    const usage = next.usageBytes;
    await terminatePod(this.#kc, next.namespace, next.name, {
      reason: "Evicted",
      message: `The node was low on resource: ${resource}. (simulated by rekindle: ${condition}; pod usage ${usage} bytes, request ${next.requestBytes} bytes)`,
      disruptionReason: "TerminationByKubelet",
    });
    this.#log(`simulated kubelet on ${this.#node}: evicted ${next.namespace}/${next.name} (${condition})`);
  }
}
