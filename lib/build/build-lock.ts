// Serialises sim builds across processes sharing a cache (two test runs, or the CLI and tests).
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDaemonRunning } from "../util/daemon.js";
import type { Progress } from "../util/progress.js";
import { sleep } from "../util/time.js";

/** Runs `work` holding <cache>/sim/.build.lock; a lock whose holder died is taken over. */
export async function withBuildLock<T>(
  cacheDir: string,
  progress: Progress,
  signal: AbortSignal | undefined,
  work: () => Promise<T>,
): Promise<T> {
  const lockPath = join(cacheDir, "sim", ".build.lock");
  mkdirSync(join(cacheDir, "sim"), { recursive: true });
  let reported = false;
  for (;;) {
    try {
      const fd = openSync(lockPath, "wx");
      writeFileSync(fd, JSON.stringify({ pid: process.pid }));
      closeSync(fd);
      break;
    } catch {
      let holder = 0;
      try {
        holder = (JSON.parse(readFileSync(lockPath, "utf8")) as { pid: number }).pid;
      } catch {
        // Lock file half written or gone: retry.
      }
      if (holder !== 0 && !isDaemonRunning({ pid: holder, startTicks: 0 })) {
        rmSync(lockPath, { force: true });
        continue;
      }
      if (!reported) {
        progress.info(`waiting for another rekindle build (pid ${holder}) to finish with ${lockPath}`);
        reported = true;
      }
      await sleep(2_000, signal);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lockPath, { force: true });
  }
}
