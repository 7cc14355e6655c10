// Long-running child processes (etcd, apiserver, kwok…) that may outlive the CLI invocation that
// started them. Each is identified by pid AND its kernel start time, so a recycled pid is never
// signalled by mistake, and carries REKINDLE_RUN=<tag> in its environment so leftovers can be reaped.
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, readdirSync } from "node:fs";
import { RekindleError } from "../errors.js";
import { sleep } from "./time.js";

export const RUN_TAG_ENV = "REKINDLE_RUN";

export interface DaemonSpec {
  /** Component name, e.g. "etcd" or "kwok-worker-1". */
  name: string;
  command: string;
  args: string[];
  /** Extra environment on top of the parent's. */
  env?: Record<string, string>;
  /** stdout and stderr are appended here. */
  logPath: string;
  cwd?: string;
}

export interface DaemonRecord extends DaemonSpec {
  pid: number;
  /** Start time in clock ticks since boot (field 22 of /proc/<pid>/stat). */
  startTicks: number;
  startedAt: string;
}

interface ProcStat {
  state: string;
  startTicks: number;
}

function readProcStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces and parentheses: parse after the last ')'.
    const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
    const state = rest[0];
    const ticks = Number(rest[19]);
    if (state === undefined || !Number.isFinite(ticks)) return undefined;
    return { state, startTicks: ticks };
  } catch {
    return undefined;
  }
}

/** Starts a detached process (own process group) writing to its log; returns once it has a pid. */
export function spawnDaemon(spec: DaemonSpec, runTag: string): DaemonRecord {
  const logFd = openSync(spec.logPath, "a");
  try {
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: { ...process.env, ...spec.env, [RUN_TAG_ENV]: runTag },
      stdio: ["ignore", logFd, logFd],
      detached: true,
    });
    // A missing binary surfaces as an async 'error' event; the pid is then undefined.
    child.on("error", () => undefined);
    const pid = child.pid;
    if (pid === undefined) {
      throw new RekindleError(
        "PROCESS_EXITED",
        `could not start ${spec.name}: ${spec.command} did not spawn`,
        {
          details: { command: spec.command, log: spec.logPath },
        },
      );
    }
    child.unref();
    const stat = readProcStat(pid);
    return { ...spec, pid, startTicks: stat?.startTicks ?? 0, startedAt: new Date().toISOString() };
  } finally {
    closeSync(logFd);
  }
}

/** True while the recorded process (same pid, same start time) is alive and not a zombie. */
export function isDaemonRunning(record: Pick<DaemonRecord, "pid" | "startTicks">): boolean {
  const stat = readProcStat(record.pid);
  if (stat === undefined || stat.state === "Z" || stat.state === "X") return false;
  return record.startTicks === 0 || stat.startTicks === record.startTicks;
}

/**
 * Signals a daemon's whole process group: spawnDaemon starts each one detached, as the leader of a
 * group of its own, so the group is the daemon and whatever it runs (a sim worker is a restart loop
 * around its kwok; node loss must kill both). Falls back to the pid alone where no such group is.
 */
export function signalProcessGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    process.kill(pid, signal);
  }
}

/** Sends a signal if the recorded process is still the one we started; returns whether it was sent. */
export function signalDaemon(
  record: Pick<DaemonRecord, "pid" | "startTicks">,
  signal: NodeJS.Signals,
): boolean {
  if (!isDaemonRunning(record)) return false;
  try {
    signalProcessGroup(record.pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM (or SIGCONT+SIGTERM for a stopped process), then SIGKILL after `graceMs`. */
export async function stopDaemon(
  record: Pick<DaemonRecord, "pid" | "startTicks">,
  graceMs = 5_000,
): Promise<void> {
  if (!isDaemonRunning(record)) return;
  signalDaemon(record, "SIGCONT");
  signalDaemon(record, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isDaemonRunning(record)) return;
    await sleep(50);
  }
  signalDaemon(record, "SIGKILL");
  const killDeadline = Date.now() + 5_000;
  while (Date.now() < killDeadline && isDaemonRunning(record)) await sleep(50);
}

/** Last lines of a component log, for error messages. */
export function logTail(logPath: string, lines = 20): string {
  try {
    return readFileSync(logPath, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

/** Pids of live processes whose environment carries REKINDLE_RUN=<runTag> (leftover hunting). */
export function findProcessesByRunTag(runTag: string): number[] {
  const needle = `${RUN_TAG_ENV}=${runTag}`;
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      const stat = readProcStat(pid);
      if (environ.includes(needle) && stat !== undefined && stat.state !== "Z") found.push(pid);
    } catch {
      // Process gone or not ours to read.
    }
  }
  return found;
}
