// What the agent does on its node, as shell scripts run in the host's namespaces (nsenter into PID
// 1's mount, network, UTS, IPC and PID namespaces: the agent pod is hostPID and privileged), with
// the node's own systemctl and iptables. Each revert is idempotent: it may run twice (the agent at
// the deadline and the systemd timer that backs it up) or on a node that was never faulted.
import { execFile } from "node:child_process";
import { RekindleError } from "../errors.js";
import type { AgentAction } from "./protocol.js";

/** The agent's state directory on the node (a hostPath, the same path inside and outside the pod). */
export const NODE_STATE_DIR = "/var/lib/rekindle-agent";
/** The iptables chain a partition fills; jumped to from OUTPUT. */
export const PARTITION_CHAIN = "REKINDLE-AGENT-PARTITION";
/** Units a node loss stops, in this order (those that run); started again in reverse. */
const NODE_LOSS_UNITS = ["kubelet", "containerd", "crio", "cri-docker", "docker"];
/**
 * What a fill leaves available, under the kubelet's default hard eviction thresholds
 * (memory.available 100Mi, nodefs.available 10 %, imagefs.available 15 %) with room to spare.
 */
export const FILL_LEAVES = { memoryMiB: 50, diskPercent: 5 } as const;

/** The systemd unit of the on-node backstop timer for `action` (dead-man's switch). */
export function backstopUnit(action: AgentAction): string {
  return `rekindle-agent-revert-${action}`;
}

export function revertScriptPath(action: AgentAction): string {
  return `${NODE_STATE_DIR}/revert-${action}.sh`;
}

function partitionApply(targets: readonly string[]): string {
  return `set -e
C=${PARTITION_CHAIN}
t="${targets.join(" ")}"
# The kubelet's own server address, as its kubeconfig names it (a load balancer, a host name).
server=$(sed -n 's#^ *server: *https://##p' /etc/kubernetes/kubelet.conf 2>/dev/null | head -n1)
if [ -n "$server" ]; then
  hp=\${server%%/*}; host=\${hp%:*}; port=\${hp##*:}; [ "$port" = "$hp" ] && port=443
  for ip in $(getent ahostsv4 "$host" | awk '{print $1}'); do t="$t $ip:$port"; done
fi
[ -n "$t" ] || { echo "no API server address found" >&2; exit 1; }
iptables -w -N $C 2>/dev/null || iptables -w -F $C
for a in $(printf '%s\\n' $t | sort -u); do iptables -w -A $C -p tcp -d "\${a%:*}" --dport "\${a##*:}" -j DROP; done
iptables -w -C OUTPUT -j $C 2>/dev/null || iptables -w -I OUTPUT 1 -j $C
echo "dropping the node's traffic to $(printf '%s\\n' $t | sort -u | tr '\\n' ' ')"`;
}

const PARTITION_REVERT = `C=${PARTITION_CHAIN}
while iptables -w -D OUTPUT -j $C 2>/dev/null; do :; done
iptables -w -F $C 2>/dev/null; iptables -w -X $C 2>/dev/null; true`;

const STOP_APPLY = `set -e
: > ${NODE_STATE_DIR}/stopped-units
for u in ${NODE_LOSS_UNITS.join(" ")}; do
  if systemctl is-active --quiet "$u"; then echo "$u" >> ${NODE_STATE_DIR}/stopped-units; systemctl stop "$u"; fi
done
cat ${NODE_STATE_DIR}/stopped-units | tr '\\n' ' '`;

const STOP_REVERT = `units=$(cat ${NODE_STATE_DIR}/stopped-units 2>/dev/null || echo "kubelet containerd")
rev=""; for u in $units; do rev="$u $rev"; done
rc=0; for u in $rev; do systemctl start "$u" || rc=1; done
rm -f ${NODE_STATE_DIR}/stopped-units; exit $rc`;

/** Memory: a tmpfs filled until FILL_LEAVES.memoryMiB of MemAvailable is left. */
const MEMORY_APPLY = `set -e
d=/run/rekindle-agent-fill; mkdir -p $d
mountpoint -q $d || mount -t tmpfs -o size=100% rekindle-agent-fill $d
avail=$(awk '/^MemAvailable:/{print $2}' /proc/meminfo)
fill=$(( avail - ${FILL_LEAVES.memoryMiB} * 1024 ))
[ "$fill" -gt 0 ] && dd if=/dev/zero of=$d/fill bs=1M count=$(( fill / 1024 )) status=none
echo "filled $(( fill / 1024 )) MiB of memory"`;

const MEMORY_REVERT = `d=/run/rekindle-agent-fill; rm -f $d/fill; mountpoint -q $d && umount $d; rmdir $d 2>/dev/null; true`;

/** Disk: a file on the kubelet's filesystem filled until FILL_LEAVES.diskPercent of it is available. */
const DISK_APPLY = `set -e
f=/var/lib/kubelet/rekindle-agent-fill
read size avail <<EOF2
$(df -Pk /var/lib/kubelet | awk 'NR==2{print $2, $4}')
EOF2
fill=$(( avail - size * ${FILL_LEAVES.diskPercent} / 100 ))
[ "$fill" -gt 0 ] && fallocate -l $(( fill * 1024 )) $f
echo "filled $(( fill / 1024 )) MiB of /var/lib/kubelet's filesystem"`;

const DISK_REVERT = `rm -f /var/lib/kubelet/rekindle-agent-fill; true`;

/** The script that applies `action` (partition: dropping traffic to `targets`, "ip:port"). */
export function applyScript(action: AgentAction, targets: readonly string[] = []): string {
  switch (action) {
    case "stop":
      return STOP_APPLY;
    case "partition":
      return partitionApply(targets);
    case "pressure-memory":
      return MEMORY_APPLY;
    case "pressure-disk":
      return DISK_APPLY;
  }
}

export function revertScript(action: AgentAction): string {
  switch (action) {
    case "stop":
      return STOP_REVERT;
    case "partition":
      return PARTITION_REVERT;
    case "pressure-memory":
      return MEMORY_REVERT;
    case "pressure-disk":
      return DISK_REVERT;
  }
}

/**
 * Arms the node's own timer: systemd runs the revert script at the deadline (plus `graceS`, so the
 * agent reverts and reports first when it can), even with the agent, kubelet and runtime gone.
 */
export function armBackstopScript(action: AgentAction, inSeconds: number): string {
  const unit = backstopUnit(action);
  return `systemctl stop ${unit}.timer ${unit}.service 2>/dev/null; systemctl reset-failed ${unit}.timer ${unit}.service 2>/dev/null
systemd-run --unit ${unit} --on-active=${Math.max(1, Math.ceil(inSeconds))}s --timer-property=AccuracySec=1s /bin/sh ${revertScriptPath(action)}`;
}

export function disarmBackstopScript(action: AgentAction): string {
  const unit = backstopUnit(action);
  return `systemctl stop ${unit}.timer 2>/dev/null; systemctl reset-failed ${unit}.timer ${unit}.service 2>/dev/null; true`;
}

/** Runs a script on the host, returns its stdout; a RekindleError with its stderr when it fails. */
export type HostShell = (script: string, what: string) => Promise<string>;

/** The host's shell through nsenter (the agent pod is hostPID and privileged). */
export const nsenterShell: HostShell = (script, what) =>
  new Promise((resolve, reject) => {
    execFile(
      "nsenter",
      ["-t", "1", "-m", "-u", "-i", "-n", "-p", "--", "/bin/sh", "-c", script],
      { timeout: 120_000, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        if (error) {
          reject(
            new RekindleError(
              "COMMAND_FAILED",
              `${what} failed on the node: ${stderr.trim() || error.message}`,
              {
                details: { stdout, stderr },
              },
            ),
          );
        } else resolve(stdout.trim());
      },
    );
  });
