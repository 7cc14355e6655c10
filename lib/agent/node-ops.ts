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

/**
 * SIGKILLs every process of every pod on the node but the agent's own (pod UID `spare`, as its
 * pod's cgroup path names it, with "-" or "_"), found by its cgroup under kubepods (cgroup v1 or
 * v2, either driver); repeated until none is left, as a power loss would. `proc` is /proc on a node.
 * Prints "stopped N containers (M processes) in P pods".
 */
export function killPodsScript(spare: string, proc = "/proc"): string {
  return `spare=${JSON.stringify(spare)}
[ -n "$spare" ] || spare=$(sed -n 's/.*pod\\([0-9a-f]\\{8\\}[-_][0-9a-f_-]\\{27\\}\\).*/\\1/p' ${proc}/$$/cgroup | head -n1)
[ -n "$spare" ] || { echo "the agent cannot tell its own pod (no POD_UID): not stopping the node's containers" >&2; exit 1; }
s1=$(echo "$spare" | tr _ -); s2=$(echo "$spare" | tr - _)
self=$(grep -m1 kubepods ${proc}/$$/cgroup 2>/dev/null || true)
case $self in ""|*"$s1"*|*"$s2"*) ;; *) echo "the agent's own cgroup $self is not pod $spare's: not stopping the node's containers" >&2; exit 1 ;; esac
seen=$(mktemp); pass=0
while :; do
  found=0
  for d in ${proc}/[0-9]*; do
    cg=$(grep -m1 kubepods "$d/cgroup" 2>/dev/null) || continue
    case $cg in *"$s1"*|*"$s2"*) continue ;; esac
    state=$(sed 's/.*) //' "$d/stat" 2>/dev/null | cut -c1)
    case $state in Z|X) continue ;; esac
    kill -9 "\${d##*/}" 2>/dev/null || continue
    found=$((found + 1)); echo "\${d##*/} \${cg##*:}" >> "$seen"
  done
  [ "$found" -eq 0 ] && break
  pass=$((pass + 1))
  [ "$pass" -lt 50 ] || { echo "pod processes still alive after 50 SIGKILL passes" >&2; rm -f "$seen"; exit 1; }
  sleep 0.2
done
containers=$(cut -d' ' -f2 "$seen" | sort -u | wc -l); processes=$(cut -d' ' -f1 "$seen" | sort -u | wc -l)
pods=$(sed -n 's/.*pod\\([0-9a-f_-]\\{36\\}\\).*/\\1/p' "$seen" | sort -u | wc -l); rm -f "$seen"
echo "stopped $containers containers ($processes processes) in $pods pods"`;
}

/** The count a stop's answer gives ("stopped N containers"); undefined from an agent that stops none. */
export function containersStopped(message: string): number | undefined {
  const match = /stopped (\d+) containers/.exec(message);
  return match ? Number(match[1]) : undefined;
}

/**
 * Node loss: the kubelet and runtime stopped, then every pod container but the agent's killed
 * (a runtime's KillMode=process leaves its shims and containers running when it stops).
 */
export function stopApplyScript(spare: string, stateDir = NODE_STATE_DIR, proc = "/proc"): string {
  return `set -e
: > ${stateDir}/stopped-units
for u in ${NODE_LOSS_UNITS.join(" ")}; do
  if systemctl is-active --quiet "$u"; then echo "$u" >> ${stateDir}/stopped-units; systemctl stop "$u"; fi
done
killed=$(${killPodsScript(spare, proc).replaceAll("\n", "\n  ")}
)
units=$(tr '\\n' ' ' < ${stateDir}/stopped-units)
echo "stopped \${units% }; $killed"`;
}

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
export function applyScript(action: AgentAction, targets: readonly string[] = [], spare = ""): string {
  switch (action) {
    case "stop":
      return stopApplyScript(spare);
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
