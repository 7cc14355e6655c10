// Last-resort cleanup for processes this Node process started: on normal exit, on Ctrl-C/SIGTERM,
// and on an uncaught exception, every registered process is killed so nothing is left running.
import { isDaemonRunning, type DaemonRecord } from "./daemon.js";

type AsyncCleanup = () => Promise<void>;

const processes = new Map<string, Pick<DaemonRecord, "pid" | "startTicks">>();
const asyncCleanups = new Set<AsyncCleanup>();
let installed = false;

function killAllSync(): void {
  for (const record of processes.values()) {
    if (!isDaemonRunning(record)) continue;
    try {
      process.kill(record.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  processes.clear();
}

async function onSignal(signal: NodeJS.Signals): Promise<void> {
  process.stderr.write(`\n[rekindle] ${signal}: cleaning up…\n`);
  const pending = [...asyncCleanups];
  asyncCleanups.clear();
  const deadline = new Promise<void>((resolve) => setTimeout(resolve, 20_000).unref());
  await Promise.race([Promise.allSettled(pending.map((c) => c())), deadline]);
  killAllSync();
  process.exit(signal === "SIGINT" ? 130 : 143);
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on("exit", killAllSync);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, (s: NodeJS.Signals) => void onSignal(s));
  }
}

/** Kill this process (by pid + start time) if we exit without releasing it. */
export function trackProcess(key: string, record: Pick<DaemonRecord, "pid" | "startTicks">): void {
  install();
  processes.set(key, record);
}

export function untrackProcess(key: string): void {
  processes.delete(key);
}

/** Graceful cleanup to run on Ctrl-C/SIGTERM (bounded to 20 s), e.g. a cluster's destroy(). */
export function onInterrupt(cleanup: AsyncCleanup): () => void {
  install();
  asyncCleanups.add(cleanup);
  return () => asyncCleanups.delete(cleanup);
}
