// Free loopback TCP ports for the processes rekindle starts, chosen at run time so that clusters
// can run side by side. A port is checked free by binding it, then released for the process that
// will listen on it, which leaves a window in which someone else can take it. Two things close it:
// - Ports come from below the kernel's ephemeral range, so no outgoing connection (of which a
//   cluster makes thousands) is given one in the meantime.
// - Each chosen port is reserved by a file created exclusively in a directory every rekindle
//   process shares, so two clusters booting at once (`--parallel`) never choose the same port.
// Seen before this: ports from listen(0); five clusters booting together; one kube-scheduler
// exited with "address already in use" while another cluster's scheduler answered its /healthz,
// and its cluster timed out waiting for pods to be scheduled.
import { mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { RekindleError } from "../errors.js";
import { isDaemonRunning } from "./daemon.js";

/** The lowest port chosen: clear of the 1xxxx ports services commonly claim. */
export const LOWEST_PORT = 20000;

/** Linux's default ephemeral range starts here; used when the kernel's setting cannot be read. */
const DEFAULT_EPHEMERAL_LOW = 32768;

/**
 * How long a reservation whose process has exited still holds its port: the components it started
 * may outlive it (a detached `sim up`) and bind a moment later. Past that, a bound port shows as
 * taken by the bind check itself.
 */
export const ORPHAN_RESERVATION_MS = 2 * 60_000;

export interface FreePortOptions {
  /** Ports chosen from, [first, end). Default: LOWEST_PORT up to the kernel's ephemeral range. */
  range?: readonly [number, number];
  /** Where reservations are kept. Default: one directory per user under the OS temp directory. */
  reservationsDir?: string;
  /** Random number in [0, 1), for the order ports are tried in. Default: Math.random. */
  random?: () => number;
}

/** The kernel's ephemeral port range's first port, from /proc (Linux); the default elsewhere. */
export function ephemeralRangeLow(procFile = "/proc/sys/net/ipv4/ip_local_port_range"): number {
  try {
    const [low] = readFileSync(procFile, "utf8").trim().split(/\s+/).map(Number);
    return low !== undefined && Number.isInteger(low) && low > 0 ? low : DEFAULT_EPHEMERAL_LOW;
  } catch {
    return DEFAULT_EPHEMERAL_LOW;
  }
}

function defaultRange(): [number, number] {
  const end = ephemeralRangeLow();
  // A kernel configured with ephemeral ports this low leaves no quiet range: use any port below 65536.
  return end - LOWEST_PORT >= 1000 ? [LOWEST_PORT, end] : [LOWEST_PORT, 65536];
}

function defaultReservationsDir(): string {
  return join(tmpdir(), `rekindle-ports-${userInfo().uid}`);
}

/** Takes `port`'s reservation file, or says it is held (by a live process, or recently). */
function reserve(dir: string, port: number): boolean {
  const file = join(dir, String(port));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx" });
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    let owner: number;
    let ageMs: number;
    try {
      owner = Number(readFileSync(file, "utf8"));
      ageMs = Date.now() - statSync(file).mtimeMs;
    } catch {
      continue; // Removed meanwhile: try again.
    }
    if (Number.isInteger(owner) && isDaemonRunning({ pid: owner, startTicks: 0 })) return false;
    if (ageMs < ORPHAN_RESERVATION_MS) return false;
    try {
      unlinkSync(file);
    } catch {
      // Another process reclaimed it first; the exclusive create decides.
    }
  }
  return false;
}

/** Whether 127.0.0.1:`port` can be bound now (the listener is closed again before this resolves). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => {
      resolve(false);
    });
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => {
      server.close(() => {
        resolve(true);
      });
    });
  });
}

/**
 * `count` distinct ports on 127.0.0.1 that were free and are now reserved for this process until
 * it releases them (releaseLoopbackPorts, once what listens on them has bound) or exits (see
 * ORPHAN_RESERVATION_MS). Fails with CONFLICT when the range has too few free ports.
 */
export async function freeLoopbackPorts(count: number, options: FreePortOptions = {}): Promise<number[]> {
  const [first, end] = options.range ?? defaultRange();
  const dir = options.reservationsDir ?? defaultReservationsDir();
  const random = options.random ?? Math.random;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const size = end - first;
  // Walk the range once from a random start; the reservation files settle any overlap.
  const start = Math.floor(random() * size);
  const ports: number[] = [];
  for (let i = 0; i < size && ports.length < count; i++) {
    const port = first + ((start + i) % size);
    if (!reserve(dir, port)) continue;
    if (await bindable(port)) ports.push(port);
    else releaseLoopbackPorts([port], { reservationsDir: dir });
  }
  if (ports.length < count) {
    releaseLoopbackPorts(ports, { reservationsDir: dir });
    throw new RekindleError(
      "CONFLICT",
      `only ${ports.length} of ${count} loopback ports free in ${first}-${end - 1}`,
      {
        hint: `stop what holds ports there (ss -ltn), or remove stale reservations in ${dir}`,
        details: { range: [first, end - 1], reservationsDir: dir, wanted: count },
      },
    );
  }
  return ports;
}

/** Ends this process's reservations of `ports`: call once what listens on them has bound (or failed). */
export function releaseLoopbackPorts(ports: readonly number[], options: FreePortOptions = {}): void {
  const dir = options.reservationsDir ?? defaultReservationsDir();
  for (const port of ports) {
    const file = join(dir, String(port));
    try {
      if (Number(readFileSync(file, "utf8")) === process.pid) unlinkSync(file);
    } catch {
      // Not reserved (any more).
    }
  }
}
