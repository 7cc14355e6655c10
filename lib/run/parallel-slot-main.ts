// Process entry of one cluster of `rekindle run --parallel` (started by parallel-run.ts with an IPC
// channel): takes its part of the run's plan (slot-plan.ts, checked on receipt), boots its own sim
// cluster through runConformance, runs the scenarios the parent hands out one at a time, writes its reports into its own directory and tells the parent how it ended.
// Ctrl-C reaches it from the terminal as it reaches the parent; an "abort" message, or the parent
// going away (the channel closes), interrupts it the same way.
import { errorMessage, RekindleError } from "../errors.js";
import { interruptOnBrokenOutput } from "../util/broken-output.js";
import { interruptScope } from "../util/cleanup.js";
import { consoleProgress } from "../util/progress.js";
import { isToSlot, type FromSlot, type SlotDone, type ToSlot } from "./parallel-protocol.js";
import type { ScenarioSource } from "./parallel-queue.js";
import { runConformance } from "./runner.js";
import { readSlotPlan, slotRunPlan } from "./slot-plan.js";

const INTERRUPT_CLEANUP_BUDGET_MS = 300_000;

/** Sends to the parent; resolves once the message is handed over (before the process may exit). */
function send(message: FromSlot): Promise<void> {
  return new Promise((resolve) => {
    if (process.send === undefined || !process.connected) resolve();
    else
      process.send(message, undefined, {}, () => {
        resolve();
      });
  });
}

/** Asks the parent for the next scenario; one question at a time (a cluster runs one scenario at a time). */
function parentSource(): ScenarioSource & { answer(id: string | null): void } {
  let waiting: ((id: string | undefined) => void) | undefined;
  return {
    next() {
      return new Promise((resolve) => {
        waiting = resolve;
        void send({ type: "next" });
      });
    },
    answer(id) {
      const resolve = waiting;
      waiting = undefined;
      resolve?.(id ?? undefined);
    },
  };
}

/** Runs the plan the parent sent (unchecked until here: a malformed one ends as a harness error). */
async function runSlot(plan: unknown, source: ScenarioSource, signal: AbortSignal): Promise<SlotDone> {
  try {
    const result = await runConformance(slotRunPlan(readSlotPlan(plan)), {
      scenarioSource: source,
      progress: consoleProgress(),
      signal,
    });
    const error = result.harnessError;
    return {
      type: "done",
      failed: result.failed,
      testFailures: result.testFailures ?? 0,
      ...(error !== undefined
        ? {
            harnessError: {
              code: error.code,
              message: error.message,
              ...(error.hint !== undefined ? { hint: error.hint } : {}),
            },
          }
        : {}),
      interrupted: false,
    };
  } catch (error) {
    const known = error instanceof RekindleError ? error : undefined;
    if (known?.code === "ABORTED") return { type: "done", failed: 0, testFailures: 0, interrupted: true };
    return {
      type: "done",
      failed: 0,
      testFailures: 0,
      harnessError: { code: known?.code ?? "HARNESS_FAILED", message: errorMessage(error) },
      interrupted: false,
    };
  }
}

async function main(): Promise<number> {
  // The parent reads this process's output: if it goes, the cluster is still torn down.
  interruptOnBrokenOutput();
  using interrupt = interruptScope("rekindle run --parallel (one cluster)", {
    budgetMs: INTERRUPT_CLEANUP_BUDGET_MS,
  });
  const stop = new AbortController();
  const signal = AbortSignal.any([interrupt.signal, stop.signal]);
  const source = parentSource();
  process.on("disconnect", () => {
    stop.abort(new RekindleError("ABORTED", "rekindle run --parallel went away"));
    source.answer(null);
  });
  const start = await new Promise<Extract<ToSlot, { type: "start" }>>((resolve) => {
    process.on("message", (message: unknown) => {
      if (!isToSlot(message)) return;
      if (message.type === "start") resolve(message);
      else if (message.type === "scenario") source.answer(message.id);
      else {
        stop.abort(new RekindleError("ABORTED", "rekindle run --parallel was interrupted"));
        source.answer(null);
      }
    });
  });
  const done = await runSlot(start.plan, source, signal);
  await send(done);
  const code = done.interrupted ? 130 : done.harnessError !== undefined ? 3 : done.failed > 0 ? 1 : 0;
  interrupt.settle(code);
  return code;
}

main().then(
  (code) => {
    // Whatever a library left open (a watch's socket) must not keep the finished cluster's process alive.
    process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`cluster process failed: ${errorMessage(error)}\n`);
    process.exit(3);
  },
);
