// What a results file records so docs/measurements.md can publish its numbers: the command that
// produced it, the date and the git sha (the machine and run count each benchmark writes itself).
import { execFileSync } from "node:child_process";
import { loadavg } from "node:os";
import { relative } from "node:path";
import { PROJECT_ROOT } from "../lib/util/project-files.js";

export interface BenchProvenance {
  command: string;
  date: string;
  /** Absent when git cannot say (no checkout): the page then lists the file as not published. */
  gitSha?: string;
  gitDirty?: boolean;
  /** The 1-minute load average when the benchmark started: other work on the machine skews timings. */
  loadAverage: number;
}

function git(args: string[]): string | undefined {
  try {
    return execFileSync("git", args, {
      cwd: PROJECT_ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return undefined;
  }
}

/** A shell word as typed: quoted when it holds anything a shell would read. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Call before writing results: the dirty flag must not count the results file itself. */
export function benchProvenance(): BenchProvenance {
  const script = relative(PROJECT_ROOT, process.argv[1] ?? "bench/?");
  const command = ["npx", "tsx", script, ...process.argv.slice(2)].map(shellWord).join(" ");
  const sha = git(["rev-parse", "HEAD"]);
  const status = git(["status", "--porcelain", "--untracked-files=no"]);
  return {
    command,
    date: new Date().toISOString().slice(0, 10),
    loadAverage: Math.round((loadavg()[0] ?? 0) * 10) / 10,
    ...(sha !== undefined ? { gitSha: sha } : {}),
    ...(status !== undefined ? { gitDirty: status !== "" } : {}),
  };
}
