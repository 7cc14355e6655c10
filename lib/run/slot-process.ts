// One cluster's process of `rekindle run --parallel`: started with an IPC channel, its output
// passed on line by line under the cluster's label, its questions for the next scenario answered
// from the parent's queue. It is told to stop (never killed) when the run is interrupted, so its
// scenario's undo and its cluster's teardown run; if the parent exits first, it is sent SIGTERM
// (its own cleanup runs on that too).
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { nodeEntryCommand } from "../util/project-files.js";
import { isFromSlot, type SlotDone, type ToSlot } from "./parallel-protocol.js";
import type { SlotPlan } from "./slot-plan.js";

export interface SlotExit {
  /** How its run ended; undefined when the process died before saying so. */
  done: SlotDone | undefined;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

export interface SlotHandlers {
  /** The next scenario for this cluster, or undefined when none is left. */
  next(): string | undefined;
  /** Where its lines go, each already prefixed with its label. */
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
}

export interface SlotProcess {
  index: number;
  label: string;
  pid: number | undefined;
  exited: Promise<SlotExit>;
  /** Interrupts its run (idempotent); it ends on its own once its cluster is down. */
  abort(): void;
}

/** "[cluster 2]". */
export function slotLabel(index: number): string {
  return `[cluster ${index}]`;
}

function passLines(stream: NodeJS.ReadableStream | null, to: NodeJS.WritableStream, label: string): void {
  if (stream === null) return;
  createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => {
    to.write(`${label} ${line}\n`);
  });
}

function sendTo(child: ChildProcess, message: ToSlot): void {
  if (child.connected) child.send(message);
}

export function startSlot(index: number, plan: SlotPlan, handlers: SlotHandlers): SlotProcess {
  const label = slotLabel(index);
  const { command, args } = nodeEntryCommand(import.meta.url, "./parallel-slot-main");
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe", "ipc"] });
  passLines(child.stdout, handlers.out, label);
  passLines(child.stderr, handlers.err, label);
  const killOnExit = () => child.kill("SIGTERM");
  process.on("exit", killOnExit);
  let done: SlotDone | undefined;
  child.on("message", (message: unknown) => {
    if (!isFromSlot(message)) return;
    if (message.type === "next") sendTo(child, { type: "scenario", id: handlers.next() ?? null });
    else done = message;
  });
  const exited = new Promise<SlotExit>((resolve) => {
    child.on("close", (exitCode, signal) => {
      process.off("exit", killOnExit);
      resolve({ done, exitCode, signal });
    });
    child.on("error", () => {
      process.off("exit", killOnExit);
      resolve({ done, exitCode: null, signal: null });
    });
  });
  sendTo(child, { type: "start", slot: index, plan });
  let aborted = false;
  return {
    index,
    label,
    pid: child.pid,
    exited,
    abort() {
      if (aborted) return;
      aborted = true;
      sendTo(child, { type: "abort" });
    },
  };
}
