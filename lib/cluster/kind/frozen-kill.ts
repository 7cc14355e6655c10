// Killing a paused (frozen) node container without letting it run again. On cgroup v1 a frozen
// task takes no signal until it is thawed, and the engine thaws a paused container to stop or kill
// it: measured here (docker 26, cgroup v1), a frozen loop writing every 50 ms wrote 8–12 more times
// through `docker stop -t 0` and once through `docker kill`. A partitioned kind node's kubelet used
// that moment to renew its Lease after the recovery controller had powered it off, and the
// controller aborted the fence. A power cut gives a node no such moment, so every process of the
// frozen container gets SIGKILL first, from this host, while frozen: on thaw each one dies before
// it returns to user space. Measured the same way: 0 writes after the pause, in 3 of 3 runs.
import { readFileSync } from "node:fs";
import type { ContainerRuntimeClient } from "testcontainers";

// dockerode's types as testcontainers exposes them (dockerode is its dependency, not ours).
export type EngineContainer = ReturnType<ContainerRuntimeClient["container"]["getById"]>;

/** `docker top`'s answer: column titles and one row of strings per process. */
interface TopAnswer {
  Titles?: unknown;
  Processes?: unknown;
}

/** Host PIDs of the container's processes, from `docker top` (PID column). */
export function pidsFromTop(answer: unknown): number[] {
  const { Titles, Processes } = (answer ?? {}) as TopAnswer;
  if (!Array.isArray(Titles) || !Array.isArray(Processes)) return [];
  const column = Titles.indexOf("PID");
  if (column < 0) return [];
  return Processes.flatMap((row: unknown) => {
    const pid = Array.isArray(row) ? Number(row[column]) : NaN;
    return Number.isInteger(pid) && pid > 1 ? [pid] : [];
  });
}

/**
 * True when `pid` on this host belongs to container `containerId` (its cgroup path names the id).
 * False when the engine runs elsewhere (a VM, a remote host): its PIDs are not this host's.
 */
export function pidInContainer(pid: number, containerId: string, readCgroup = defaultReadCgroup): boolean {
  const cgroup = readCgroup(pid);
  return cgroup !== undefined && cgroup.includes(containerId);
}

function defaultReadCgroup(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cgroup`, "utf8");
  } catch {
    return undefined;
  }
}

export interface FrozenKillResult {
  /** Processes sent SIGKILL from this host while frozen. */
  killed: number;
  /** False when none of the container's PIDs could be checked on this host (a remote engine). */
  local: boolean;
}

/**
 * Sends SIGKILL to every process of the paused container while it is frozen, then has the engine
 * kill it (which thaws it; the processes die at once). A remote engine's PIDs are not touched: the
 * engine's own kill is then all there is, with the thaw race described above.
 */
export async function killFrozenContainer(
  container: EngineContainer,
  containerId: string,
  readCgroup = defaultReadCgroup,
): Promise<FrozenKillResult> {
  const pids = pidsFromTop(await container.top({ ps_args: "-o pid" }));
  const ours = pids.filter((pid) => pidInContainer(pid, containerId, readCgroup));
  let killed = 0;
  for (const pid of ours) {
    try {
      process.kill(pid, "SIGKILL");
      killed++;
    } catch {
      // Gone already (ESRCH): nothing to kill.
    }
  }
  await killContainer(container);
  return { killed, local: ours.length > 0 };
}

/** The engine's SIGKILL; a container that exited meanwhile (409: not running) is not an error. */
export async function killContainer(container: EngineContainer): Promise<void> {
  await container.kill({ signal: "SIGKILL" }).catch((error: unknown) => {
    if ((error as { statusCode?: unknown }).statusCode !== 409) throw error;
  });
}
