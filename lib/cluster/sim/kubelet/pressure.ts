// Simulated kubelet eviction manager for one sim node under memory or disk pressure. KWOK has no
// eviction manager; this plays the kubelet's part (labelled simulated in reports), timed as the
// v1.34 kubelet is (eviction_manager.go, measured against kind in docs/calibration.md):
// - its loop looks every monitoring interval, at a phase the fault does not choose (pressure that
//   comes by itself), unless the fault's setup sets it, as kind's do (small-node.ts):
//   - kind's disk fault restarts the kubelet (it moves onto a small filesystem): a restarted
//     kubelet's loops start with it, so its first look and its first status write come one interval
//     after the restart, the write after the look. The provider then waits for the kubelet's stats
//     to show the new filesystem and sizes the fill before the fault's time zero: on kind the first
//     disk eviction came 9.5–9.8 s after the fault and the condition within 0.35 s of it (10 runs,
//     2026-11-26), so the look came 9.1–9.5 s after it, less the eviction's kill;
//   - kind's memory fault starts once the kubelet's stats show the small MemTotal, which cadvisor
//     reads when it refreshes its root container's spec (on a stats read at least 5 s after the
//     last refresh), so the fault starts at a phase of the kubelet's reads: the first eviction came
//     4.3–6.8 s after the fault in 13 of 13 kind runs as the scenario runs them (2026-11-26 and
//     11-29), never in the first 4 s, so the sim's first look is drawn from 4.1–6.5 s (the last
//     eight runs' 4.4–6.8 s, less the kill); the status writes keep their phase;
// - a pass that sees the signal met evicts one pod in the kubelet's order, never a critical pod
//   (system-node-critical DaemonSet pods, static and mirror pods: the kubelet refuses those), waits
//   for its cleanup (polled every second) and looks again at once, so a fill no eviction relieves
//   costs every evictable pod its place, 1–3 s apart;
// - it ranks every pod it admitted, started or not: under MemoryPressure a Burstable replacement
//   that its Deployment's scheduler puts back on the node before the NoSchedule taint is admitted
//   and evicted at the next pass, again and again until the taint is on, before the Guaranteed pod
//   goes (kind, 2026-11-29: two or three Burstable replacements evicted about 1.5 s apart, the
//   Guaranteed pod about 2 s after the condition reached the Node);
// - the condition it keeps is written to the Node at the kubelet's next status update, so the
//   first eviction can come before the condition is in the API;
// - after relief the condition stays until the transition period has passed since the last pass
//   that saw the signal (up to one monitoring interval before the relief);
// - while it holds the condition, pods newly bound to the node are refused at admission
//   (pressure-admission.ts): they never run, and are not evictions.
// The node lifecycle controller (real) adds and removes the taint.
import { errorMessage } from "../../../errors.js";
import { nextEvictionVictim, podStarted, type StarvedResource } from "../../../kube/eviction-order.js";
import { k8s } from "../../../kube/client.js";
import { podsOnNode } from "../../../kube/queries.js";
import { sleep } from "../../../util/time.js";
import type { EvictionSettings, PressureKind } from "../../provider.js";
import { setNodeCondition, terminatePod } from "./writes.js";
import { awaitingAdmission, refusalMessage, refusedUnderPressure } from "./pressure-admission.js";

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

/** The kubelet polls an evicted pod's cleanup every second before it looks again (podCleanupPollFreq). */
const POD_CLEANUP_POLL_MS = 1_000;
/**
 * From the look that chose a started pod to its eviction in the API: the runtime's kill. On kind the
 * kubelet logged a pause pod "evicted successfully" 0.20-0.46 s after the look that chose it (4
 * pods, node-pressure/memory, 2026-11-29); one still starting took 2.1 s.
 */
const EVICTION_KILL_MS = 300;
/** How often the sim looks for pods to admit: well inside the sim's pod start delay. */
const ADMISSION_POLL_MS = 200;

type ConditionStatus = "True" | "False";

export interface SimEvictionOptions {
  /** Told what did not go as a kubelet's would. Default: nothing. */
  log?: (message: string) => void;
  /**
   * Where the fault falls in the kubelet's loops (see the top of this file): "random" (a phase drawn
   * at random), "restarted" (the fault restarts the kubelet, as kind's disk fault does: both loops
   * start at the restart, 0.7 s before the fault) or "memory-setup" (kind's memory fault: the first
   * look 4.1–6.5 s after the fault, the status writes at a random phase). Default "random".
   */
  faultPhase?: SimFaultPhase;
}

export type SimFaultPhase = "random" | "restarted" | "memory-setup";

/** kind's memory fault: the kubelet's first look after it, measured (see the top of this file). */
const MEMORY_SETUP_FIRST_LOOK_MS = { min: 4_100, max: 6_500 } as const;
/** kind's disk fault: from the kubelet's restart to the fault's time zero (see the top of this file). */
const RESTART_BEFORE_FAULT_MS = 700;

/** A restarted kubelet's loop's first tick after the fault: one interval after the restart. */
function afterRestart(intervalMs: number): number {
  return Math.max(0, intervalMs - RESTART_BEFORE_FAULT_MS);
}

export class SimEvictionManager implements AsyncDisposable {
  readonly #kc: k8s.KubeConfig;
  readonly #node: string;
  readonly #kind: PressureKind;
  readonly #settings: EvictionSettings;
  readonly #abort = new AbortController();
  readonly #log: (message: string) => void;
  readonly #faultPhase: SimFaultPhase;
  /** Resolves once the eviction loop's first pass has decided the condition (or the loop ended). */
  readonly #firstLook: Promise<void>;
  #firstLookDone: () => void = () => undefined;
  #underPressure = true;
  /** When a pass last saw the signal met. */
  #lastSeenAt: number | undefined;
  /** The condition as the eviction manager holds it, and as the Node shows it. */
  #held: ConditionStatus = "False";
  #shown: ConditionStatus = "False";
  #evicting = true;
  /** UIDs of the pods the kubelet runs: started before it held the condition, or admitted since. */
  readonly #admitted = new Set<string>();
  #loops: Promise<unknown> | undefined;

  private constructor(
    kc: k8s.KubeConfig,
    node: string,
    kind: PressureKind,
    settings: EvictionSettings,
    options: SimEvictionOptions,
  ) {
    this.#kc = kc;
    this.#node = node;
    this.#kind = kind;
    this.#settings = settings;
    this.#log = options.log ?? (() => undefined);
    this.#faultPhase = options.faultPhase ?? "random";
    this.#firstLook = new Promise((resolve) => {
      this.#firstLookDone = resolve;
    });
  }

  /** Starts the simulated eviction manager and status updates; the signal is met from now on. */
  static start(
    kc: k8s.KubeConfig,
    node: string,
    kind: PressureKind,
    settings: EvictionSettings,
    options: SimEvictionOptions = {},
  ): Promise<SimEvictionManager> {
    const manager = new SimEvictionManager(kc, node, kind, settings, options);
    manager.#loops = Promise.all([manager.#evictionLoop(), manager.#statusLoop(), manager.#admissionLoop()]);
    return Promise.resolve(manager);
  }

  /** The signal is back above its threshold: no more evictions; the condition clears after the transition period. */
  relieve(): void {
    this.#underPressure = false;
  }

  /** Stops at once, clearing the condition without waiting out the transition period. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loops;
    await this.#write("False");
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  /** Resolves when the condition has cleared on the Node after `relieve()` (or `stop()`). */
  async settled(): Promise<void> {
    await this.#loops;
  }

  /** The eviction manager's synchronize loop, until the condition is no longer held. */
  async #evictionLoop(): Promise<void> {
    const signal = this.#abort.signal;
    const { monitoringIntervalMs, pressureTransitionPeriodMs } = this.#settings;
    try {
      await sleep(this.#firstLookDelay(monitoringIntervalMs), signal);
      for (;;) {
        const now = Date.now();
        if (this.#underPressure) this.#lastSeenAt = now;
        const held = this.#lastSeenAt !== undefined && now - this.#lastSeenAt < pressureTransitionPeriodMs;
        // Before admission starts refusing: what the node already runs was admitted.
        if (held && this.#held === "False") await this.#admitStarted(signal);
        this.#held = held ? "True" : "False";
        this.#firstLookDone();
        if (!held) break;
        if (this.#underPressure && (await this.#evictOne(signal))) {
          await sleep(POD_CLEANUP_POLL_MS, signal);
          continue;
        }
        await sleep(monitoringIntervalMs, signal);
      }
    } catch {
      // Aborted by stop(), which clears the condition itself.
    } finally {
      this.#evicting = false;
      this.#firstLookDone();
    }
  }

  /** The wait before the eviction loop's first look, by where the fault fell in its phase. */
  #firstLookDelay(intervalMs: number): number {
    switch (this.#faultPhase) {
      case "restarted":
        return afterRestart(intervalMs);
      case "memory-setup": {
        const { min, max } = MEMORY_SETUP_FIRST_LOOK_MS;
        return Math.min(intervalMs, min + Math.random() * (max - min));
      }
      case "random":
        return Math.random() * intervalMs;
    }
  }

  /** The kubelet's node status updates: the held condition reaches the Node at the next one. */
  async #statusLoop(): Promise<void> {
    const signal = this.#abort.signal;
    const { statusUpdateIntervalMs } = this.#settings;
    try {
      const restarted = this.#faultPhase === "restarted";
      const first = restarted ? afterRestart(statusUpdateIntervalMs) : Math.random() * statusUpdateIntervalMs;
      await sleep(first, signal);
      // A restarted kubelet's first write and first look come at once: the write shows the look.
      if (restarted) await this.#firstLook;
      for (;;) {
        const held = this.#held;
        if (held !== this.#shown) {
          await this.#write(held).catch((error: unknown) => {
            this.#log(
              `simulated node status on ${this.#node} not written (retrying): ${errorMessage(error)}`,
            );
          });
        }
        if (!this.#evicting && this.#shown === "False") return;
        await sleep(statusUpdateIntervalMs, signal);
      }
    } catch {
      // Aborted by stop().
    }
  }

  /** Marks the pods the node runs now as admitted, retrying API errors until it has (or is aborted). */
  async #admitStarted(signal: AbortSignal): Promise<void> {
    for (;;) {
      try {
        for (const pod of await podsOnNode(this.#kc, this.#node))
          if (podStarted(pod)) this.#admitted.add(pod.metadata?.uid ?? "");
        return;
      } catch (error) {
        this.#log(`simulated kubelet on ${this.#node}: pods not listed (retrying): ${errorMessage(error)}`);
        await sleep(ADMISSION_POLL_MS, signal);
      }
    }
  }

  /** Refuses, while the condition is held, the pods the kubelet would not admit; admits the rest. */
  async #admissionLoop(): Promise<void> {
    const signal = this.#abort.signal;
    try {
      while (this.#evicting) {
        if (this.#held === "True") await this.#refuseNewPods();
        await sleep(ADMISSION_POLL_MS, signal);
      }
    } catch {
      // Aborted by stop().
    }
  }

  async #refuseNewPods(): Promise<void> {
    const { condition } = SIGNALS[this.#kind];
    try {
      const pods = awaitingAdmission(await podsOnNode(this.#kc, this.#node), this.#admitted);
      for (const pod of pods) {
        if (!refusedUnderPressure(pod, this.#kind)) {
          this.#admitted.add(pod.metadata?.uid ?? "");
          continue;
        }
        const namespace = pod.metadata?.namespace ?? "";
        const name = pod.metadata?.name ?? "";
        await terminatePod(this.#kc, namespace, name, {
          reason: "Evicted",
          message: refusalMessage(condition),
        });
        // The kubelet leaves a refused pod Failed; the sim deletes it too, because KWOK's delayed
        // start (queued when the pod was bound) does not look again and would run it anyway.
        await this.#deleteNow(namespace, name);
        this.#log(
          `simulated kubelet on ${this.#node}: refused ${namespace}/${name} at admission (${condition})`,
        );
      }
    } catch (error) {
      // A pod deleted meanwhile, an API hiccup: the next poll looks again.
      this.#log(`simulated admission on ${this.#node} (retrying): ${errorMessage(error)}`);
    }
  }

  async #write(status: ConditionStatus): Promise<void> {
    const { condition, reason, message } = SIGNALS[this.#kind];
    await setNodeCondition(this.#kc, this.#node, {
      type: condition,
      status,
      ...(status === "True" ? { reason, message } : RELIEVED[this.#kind]),
    });
    this.#shown = status;
  }

  /**
   * Evicts the next pod in the kubelet's order among those it admitted, started or not; false when
   * none may be evicted (or it failed). A started pod ends after the runtime's kill; one not yet
   * started ends at once and is deleted too, as admission's refusals are (KWOK's start, queued when
   * it was bound, would run it anyway).
   */
  async #evictOne(signal: AbortSignal): Promise<boolean> {
    const { resource, condition } = SIGNALS[this.#kind];
    try {
      // Any other pod bound to the node is admission's to refuse, not the eviction loop's to evict.
      const active = (await podsOnNode(this.#kc, this.#node)).filter((p) =>
        this.#admitted.has(p.metadata?.uid ?? ""),
      );
      for (;;) {
        const next = nextEvictionVictim(active, resource);
        if (!next) return false;
        const started = next.noStats !== true;
        if (started) await sleep(EVICTION_KILL_MS, signal);
        const ended = await terminatePod(this.#kc, next.namespace, next.name, {
          reason: "Evicted",
          message: `The node was low on resource: ${resource}. (simulated by rekindle: ${condition}; pod usage ${next.usageBytes} bytes, request ${next.requestBytes} bytes)`,
          disruptionReason: "TerminationByKubelet",
        });
        if (ended) {
          if (!started) await this.#deleteNow(next.namespace, next.name);
          this.#log(
            `simulated kubelet on ${this.#node}: evicted ${next.namespace}/${next.name}${started ? "" : " before it started"} (${condition})`,
          );
          return true;
        }
        // It ended meanwhile (refused, or gone): the next in order, as the kubelet would rank it.
        const at = active.findIndex(
          (p) => p.metadata?.namespace === next.namespace && p.metadata.name === next.name,
        );
        if (at < 0) return false;
        active.splice(at, 1);
      }
    } catch (error) {
      if (signal.aborted) throw error;
      this.#log(`simulated eviction on ${this.#node} failed (retrying): ${errorMessage(error)}`);
      return false;
    }
  }

  /** Deletes an ended pod at once (grace 0); gone already is fine. */
  async #deleteNow(namespace: string, name: string): Promise<void> {
    await this.#kc
      .makeApiClient(k8s.CoreV1Api)
      .deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 })
      .catch(() => undefined);
  }
}

/**
 * The pressure condition written False at once, as this process's eviction manager would on
 * stop(): what is left of a dead run's simulated pressure (its loops died with it), for `rekindle reap`.
 */
export async function clearSimPressure(kc: k8s.KubeConfig, node: string, kind: PressureKind): Promise<void> {
  await setNodeCondition(kc, node, { type: SIGNALS[kind].condition, status: "False", ...RELIEVED[kind] });
}
