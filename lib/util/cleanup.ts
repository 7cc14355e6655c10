// Last-resort cleanup for processes this Node process started: on normal exit, on Ctrl-C/SIGTERM,
// and on an uncaught exception, every registered process is killed so nothing is left running.
import { RekindleError } from "../errors.js";
import { isDaemonRunning, signalProcessGroup, type DaemonRecord } from "./daemon.js";

type AsyncCleanup = () => Promise<void>;

const processes = new Map<string, Pick<DaemonRecord, "pid" | "startTicks">>();
/** Cleanups and how long each may take. */
const asyncCleanups = new Map<AsyncCleanup, number>();
const DEFAULT_CLEANUP_BUDGET_MS = 20_000;
let installed = false;
/** The exit code the interrupted work settled on (InterruptScope.settle); default 130 / 143. */
let settledExitCode: number | undefined;

function killAllSync(): void {
  for (const record of processes.values()) {
    if (!isDaemonRunning(record)) continue;
    try {
      signalProcessGroup(record.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  processes.clear();
}

async function onSignal(signal: NodeJS.Signals): Promise<void> {
  process.stderr.write(`\n[rekindle] ${signal}: cleaning up…\n`);
  const pending = [...asyncCleanups.keys()];
  const budgetMs = Math.max(DEFAULT_CLEANUP_BUDGET_MS, ...asyncCleanups.values());
  asyncCleanups.clear();
  if (budgetMs > DEFAULT_CLEANUP_BUDGET_MS) {
    process.stderr.write(
      `[rekindle] cleanup may take up to ${Math.round(budgetMs / 1000)}s; Ctrl-C again to stop at once (and clean up by hand)\n`,
    );
  }
  const deadline = new Promise<void>((resolve) => setTimeout(resolve, budgetMs).unref());
  await Promise.race([Promise.allSettled(pending.map((c) => c())), deadline]);
  killAllSync();
  process.exit(settledExitCode ?? (signal === "SIGINT" ? 130 : 143));
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on("exit", killAllSync);
  // A listener that stays: with `once`, a library's own handler (signal-exit, loaded by
  // testcontainers' lockfile) finds itself alone during the first signal and re-raises it, which
  // kills the process before the cleanup ran. A second signal stops at once.
  let handling = false;
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, (s: NodeJS.Signals) => {
      if (handling) {
        killAllSync();
        process.exit(s === "SIGINT" ? 130 : 143);
      }
      handling = true;
      void onSignal(s);
    });
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

/**
 * Graceful cleanup to run on Ctrl-C/SIGTERM, e.g. a cluster's destroy(); all of them together get
 * the largest budget registered (default 20 s), then whatever is left is killed.
 */
export function onInterrupt(cleanup: AsyncCleanup, options: { budgetMs?: number } = {}): () => void {
  install();
  asyncCleanups.set(cleanup, options.budgetMs ?? DEFAULT_CLEANUP_BUDGET_MS);
  return () => asyncCleanups.delete(cleanup);
}

/** A signal Ctrl-C/SIGTERM aborts; disposing the scope tells the interrupt handler the work is undone. */
export interface InterruptScope extends Disposable {
  readonly signal: AbortSignal;
  /** The exit code the work ended with: the process exits with it if a signal is being handled. */
  settle(exitCode: number): void;
}

/**
 * Long work that must undo itself when interrupted: Ctrl-C/SIGTERM aborts `signal` (reason: an
 * ABORTED RekindleError naming `what`), and the process waits up to `budgetMs` for the scope to be
 * disposed — the work's own cleanup — before exiting.
 */
export function interruptScope(what: string, options: { budgetMs?: number } = {}): InterruptScope {
  const abort = new AbortController();
  let finished: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const release = onInterrupt(async () => {
    abort.abort(new RekindleError("ABORTED", `${what} was interrupted`));
    await done;
  }, options);
  return {
    signal: abort.signal,
    settle(exitCode) {
      settledExitCode = exitCode;
    },
    [Symbol.dispose]() {
      release();
      finished();
    },
  };
}
