// An API server that stops answering without going away (a long GC pause, a hung etcd client, a
// VM frozen by its hypervisor): SIGSTOP of the sim's kube-apiserver, SIGCONT after the duration.
// Connections are accepted by the kernel but nothing answers; clients time out. kube-controller-
// manager and kube-scheduler run with --leader-elect=false, so they do not lose a leadership they
// would have to renew and keep running; they resume from their caches when it answers again.
//
// It is never left stopped: the pause ends on time, on abort, on Ctrl-C (an interrupt cleanup),
// on cluster teardown (stopDaemon continues a stopped process before it terminates it), and, if
// the process holding the pause is killed outright, by a detached backstop that continues the
// apiserver shortly after the pause was due to end.
import { join } from "node:path";
import { RekindleError } from "../../../errors.js";
import { onInterrupt, untrackProcess } from "../../../util/cleanup.js";
import { isDaemonRunning, signalDaemon, type DaemonRecord } from "../../../util/daemon.js";
import { sleep } from "../../../util/time.js";
import type { SimSession } from "../boot/session.js";
import type { SimApiserverPause, SimClusterState } from "../boot/state.js";

const APISERVER = "kube-apiserver";
const BACKSTOP = "apiserver-pause-backstop";
/** How long after the pause's end the backstop continues the apiserver if nothing else did. */
export const PAUSE_BACKSTOP_GRACE_MS = 2_000;
/** Pauses beyond an hour are typos. */
export const MAX_PAUSE_MS = 3_600_000;

/** Sends SIGCONT to the process `pid` after `ms`, if it is still the process that started at `ticks`. */
const BACKSTOP_SCRIPT = `
const [pid, ticks, ms] = process.argv.slice(1).map(Number);
setTimeout(() => {
  try {
    const stat = require("node:fs").readFileSync("/proc/" + pid + "/stat", "utf8");
    if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]) === ticks) process.kill(pid, "SIGCONT");
  } catch {}
}, ms);
`;

function apiserverRecord(session: SimSession): DaemonRecord {
  const record = session.state.components.find((c) => c.name === APISERVER);
  if (!record || !isDaemonRunning(record)) {
    throw new RekindleError(
      "PRECONDITION",
      `the kube-apiserver of sim cluster ${session.state.name} is not running`,
      {
        hint: "start a cluster with `rekindle sim up`",
      },
    );
  }
  return record;
}

export function validatePauseMs(durationMs: number): void {
  if (!Number.isFinite(durationMs) || durationMs <= 0 || durationMs > MAX_PAUSE_MS) {
    throw RekindleError.invalidInput("pause duration", durationMs, "more than 0 and at most an hour");
  }
}

/**
 * The pause in the state, unless it is over: its holder was killed and the backstop has continued
 * the apiserver since (the record is then stale).
 */
export function activePause(
  state: SimClusterState,
  nowMs: number = Date.now(),
): SimApiserverPause | undefined {
  const pause = state.apiserverPause;
  if (!pause) return undefined;
  return Date.parse(pause.until) + PAUSE_BACKSTOP_GRACE_MS < nowMs ? undefined : pause;
}

/** Freezes kube-apiserver for `durationMs`; resolves once it is continued (an abort ends the pause early and rejects). */
export async function pauseSimApiServer(
  session: SimSession,
  durationMs: number,
  signal?: AbortSignal,
): Promise<void> {
  validatePauseMs(durationMs);
  session.reload();
  const apiserver = apiserverRecord(session);
  const running = activePause(session.state);
  if (running) {
    throw new RekindleError(
      "CONFLICT",
      `the kube-apiserver of sim cluster ${session.state.name} is paused already (until ${running.until})`,
      { hint: `continue it with: rekindle sim apiserver resume --name ${session.state.name}` },
    );
  }
  // A stale record (its holder was killed; the backstop continued the apiserver): clear it.
  if (session.state.apiserverPause) resumeSimApiServer(session);
  const backstop = session.spawn(
    {
      name: BACKSTOP,
      command: process.execPath,
      args: [
        "-e",
        BACKSTOP_SCRIPT,
        String(apiserver.pid),
        String(apiserver.startTicks),
        String(durationMs + PAUSE_BACKSTOP_GRACE_MS),
      ],
      logPath: join(session.layout.logsDir, `${BACKSTOP}.log`),
    },
    BACKSTOP,
  );
  signalDaemon(apiserver, "SIGSTOP");
  session.state.apiserverPause = { until: new Date(Date.now() + durationMs).toISOString(), backstop };
  session.save();
  session.progress.info(`kube-apiserver paused (SIGSTOP) for ${durationMs / 1000}s`);
  const release = onInterrupt(() => {
    resumeSimApiServer(session);
    return Promise.resolve();
  });
  try {
    await sleep(durationMs, signal);
  } finally {
    release();
    resumeSimApiServer(session);
  }
}

/** Continues kube-apiserver and ends the pause record; false if it was not paused. Idempotent. */
export function resumeSimApiServer(session: SimSession): boolean {
  session.reload();
  const apiserver = session.state.components.find((c) => c.name === APISERVER);
  if (apiserver) signalDaemon(apiserver, "SIGCONT");
  const pause = session.state.apiserverPause;
  if (!pause) return false;
  if (pause.backstop) signalDaemon(pause.backstop, "SIGKILL");
  untrackProcess(BACKSTOP);
  delete session.state.apiserverPause;
  session.save();
  session.progress.info("kube-apiserver continued (SIGCONT)");
  return true;
}
