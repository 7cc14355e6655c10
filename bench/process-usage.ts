// What a set of daemons costs the machine: resident memory and CPU time of every process in their
// process groups (a daemon is its own group leader, spawnDaemon; a kwok runs as a child of its
// restart loop, supervised.ts, so the group is what holds the kwok).
import { readdirSync, readFileSync } from "node:fs";

/** Linux reports CPU times in clock ticks; USER_HZ is 100 on every mainstream kernel. */
const TICKS_PER_SECOND = 100;

interface ProcSample {
  pgrp: number;
  cpuTicks: number;
  rssKiB: number;
}

function sample(pid: number): ProcSample | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const rss = /VmRSS:\s+(\d+) kB/.exec(status);
    return {
      pgrp: Number(rest[2]),
      cpuTicks: Number(rest[11]) + Number(rest[12]),
      rssKiB: rss ? Number(rss[1]) : 0,
    };
  } catch {
    return undefined; // Gone meanwhile.
  }
}

export interface GroupUsage {
  rssMiB: number;
  cpuSeconds: number;
}

/** Memory and CPU time so far of the process groups led by `leaders`, by leader pid. */
export function groupUsage(leaders: readonly number[]): Map<number, GroupUsage> {
  const wanted = new Set(leaders);
  const out = new Map<number, GroupUsage>(leaders.map((p) => [p, { rssMiB: 0, cpuSeconds: 0 }]));
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const s = sample(Number(entry));
    if (!s || !wanted.has(s.pgrp)) continue;
    const usage = out.get(s.pgrp);
    if (!usage) continue;
    usage.rssMiB += s.rssKiB / 1024;
    usage.cpuSeconds += s.cpuTicks / TICKS_PER_SECOND;
  }
  return out;
}
