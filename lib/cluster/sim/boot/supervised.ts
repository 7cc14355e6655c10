// kwok processes run as a kind node runs its kubelet: under a supervisor that restarts them a second
// after they exit (kind's kubelet.service: Restart=always, RestartSec=1s). kwok v0.8.0 can die at
// start with "fatal error: concurrent map writes" in its CEL setup; unsupervised, a worker powered
// back on then stayed down for good (a gate's safety scenario waited 180 s for it).
import type { DaemonSpec } from "../../../util/daemon.js";

/** `$0` is the command, `$@` its arguments; each restart is written to the process's log. */
const RESTART_LOOP =
  'while :; do "$0" "$@"; code=$?; echo "rekindle: $0 exited with code $code; restarting in 1 s, as systemd restarts a kubelet" >&2; sleep 1; done';

/**
 * The same process under a restart loop. The loop and the process share one process group, which
 * every signal goes to (signalDaemon): SIGKILL ends both (node loss), SIGSTOP/SIGCONT freezes and
 * thaws both (a partition), SIGTERM ends both (teardown).
 */
export function restartedLikeSystemd(spec: DaemonSpec): DaemonSpec {
  return { ...spec, command: "/bin/sh", args: ["-c", RESTART_LOOP, spec.command, ...spec.args] };
}
