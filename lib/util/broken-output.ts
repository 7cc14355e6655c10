// When whoever reads this process's output goes away: `rekindle list | head`, a CI step's log
// collector killed, the `rekindle run --parallel` process a cluster's process writes to gone. Then
// stdout or stderr fails with EPIPE. Unhandled, that error ends the process where it stands, with
// its clusters and faults left behind (seen: a run's parent killed, four sim clusters kept running).
// Instead the rest of that stream's output is dropped and the process is interrupted as by SIGTERM,
// so long work undoes what it started (cleanup.ts) and the process exits with its own code.

/** Installs the handling on stdout and stderr; call once, early. */
export function interruptOnBrokenOutput(
  streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr],
  interrupt: () => void = () => process.kill(process.pid, "SIGTERM"),
): void {
  let interrupted = false;
  for (const stream of streams) {
    let broken = false;
    stream.on("error", (error: NodeJS.ErrnoException) => {
      // After EPIPE, writes fail again (the stream is destroyed): nothing more to do for them.
      if (broken) return;
      if (error.code !== "EPIPE") throw error;
      broken = true;
      if (interrupted) return;
      interrupted = true;
      interrupt();
    });
  }
}
