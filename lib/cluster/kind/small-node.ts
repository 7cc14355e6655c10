// Makes a kind node look small to its own kubelet, so that a pressure fill of about a GiB crosses
// the eviction thresholds without starving the machine. Pure: sizes and the node-side scripts.
//
// Memory: the kubelet's memory.available is cadvisor's root-container limit minus the node's
// working set, and that limit is MemTotal from /proc/meminfo (the host's, e.g. 24 GiB), re-read on
// every spec refresh (at most 5 s old). A meminfo copy with a small MemTotal bind-mounted over
// /proc/meminfo inside the node changes the signal within seconds, with no kubelet restart. The
// node's own memory cgroup (cgroup v1, written from inside the node) is capped a little above the
// small MemTotal as a guard: an overshoot is OOM-killed inside the node, not on the host. Docker
// cannot take a memory limit off a running container again (`docker update` refuses -1 and treats
// 0 as unchanged), so the guard is written and restored through the node's cgroup files.
//
// Disk: nodefs is the filesystem holding /var/lib/kubelet, on kind the host's Docker data disk
// (shared by every node, imagefs too). The kubelet's root directory is copied onto a small tmpfs
// bind-mounted over it; cadvisor learns filesystems only when the kubelet starts, so the kubelet
// restarts (running pods are untouched). With nodefs on its own device the kubelet has a dedicated
// imagefs: nodefs pressure then reclaims nothing node-level and never garbage-collects images
// (which could not be pulled again offline). Putting it back also restarts the kubelet, which
// forgets the pressure it saw: the provider does that only once the condition has cleared. Both
// restarts end any other pressure condition of that node early, and its node events (Starting,
// NodeAllocatableEnforced, …) show in the timeline.
import { MiB, GiB, thresholdBytes, type EvictionThreshold } from "./quantity.js";

export const SMALL_NODE_PATHS = {
  /** Node-side state of the small node (a tmpfs in kind nodes: gone when the node restarts). */
  state: "/run/rekindle-small-node",
  meminfo: "/run/rekindle-small-node/meminfo",
  /** The node's own memory cgroup (its cgroup namespace root on cgroup v1). */
  memoryCgroup: "/sys/fs/cgroup/memory",
  kubeletRoot: "/var/lib/kubelet",
  /** Where the small kubelet filesystem is filled before it is bind-mounted over kubeletRoot. */
  nodefsStage: "/run/rekindle-nodefs",
  /** The small filesystem's source name, as /proc/self/mountinfo shows it. */
  nodefsSource: "rekindle-nodefs",
} as const;

export interface SmallNodeSettings {
  /** MemTotal leaves at least this much above working set + threshold: about the memory fill. */
  memoryHeadroomBytes: number;
  /** The node's memory cgroup limit is MemTotal + this (cgroup v1 only). */
  memoryGuardSlackBytes: number;
  /** Size of the kubelet's own filesystem under disk pressure: about the disk fill. */
  nodefsBytes: number;
}

export const DEFAULT_SMALL_NODE: Readonly<SmallNodeSettings> = {
  memoryHeadroomBytes: GiB,
  memoryGuardSlackBytes: 256 * MiB,
  nodefsBytes: 512 * MiB,
};

/**
 * The MemTotal the node shows its kubelet: working set + threshold + headroom, rounded up to a
 * GiB (a percentage threshold is a share of that MemTotal itself, so it is solved for).
 */
export function smallMemTotalBytes(
  workingSetBytes: number,
  threshold: EvictionThreshold,
  headroomBytes: number = DEFAULT_SMALL_NODE.memoryHeadroomBytes,
): number {
  const needed = workingSetBytes + headroomBytes;
  const raw = "bytes" in threshold ? needed + threshold.bytes : needed / (1 - threshold.percent / 100);
  const total = Math.max(GiB, Math.ceil(raw / GiB) * GiB);
  // Rounding can only add room; check the percentage case did not lose it to float error.
  return total - workingSetBytes - thresholdBytes(threshold, total) >= headroomBytes ? total : total + GiB;
}

const sh = (lines: readonly string[]): string[] => ["sh", "-c", lines.join("\n")];

/** Exits 0 when /proc/meminfo is bind-mounted (by shrinkMemoryCommand). */
const MEMINFO_MOUNTED = `awk '$5 == "/proc/meminfo" { found = 1 } END { exit !found }' /proc/self/mountinfo`;

/** Exits 0 when the kubelet's root directory is the small filesystem. */
const NODEFS_MOUNTED =
  `awk -v root=${SMALL_NODE_PATHS.kubeletRoot} '$5 == root { for (i = 7; i <= NF; i++) if ($i == "-") src = $(i + 2) } ` +
  `END { exit src != "${SMALL_NODE_PATHS.nodefsSource}" }' /proc/self/mountinfo`;

/**
 * Bind-mounts a meminfo with MemTotal = `memTotalBytes` (MemFree and MemAvailable clamped to it)
 * over /proc/meminfo, then caps the node's memory cgroup at `guardBytes` unless it is already
 * lower, saving the old limits for restoreMemoryCommand. Prints "guard <bytes>" or "no guard: why".
 * Idempotent.
 */
export function shrinkMemoryCommand(memTotalBytes: number, guardBytes: number): string[] {
  const { state, meminfo, memoryCgroup: cg } = SMALL_NODE_PATHS;
  const kb = Math.floor(memTotalBytes / 1024);
  return sh([
    "set -e",
    `mkdir -p ${state}`,
    `if ! ${MEMINFO_MOUNTED}; then`,
    `  awk -v kb=${kb} '/^MemTotal:/ { printf "MemTotal:       %d kB\\n", kb; next } ` +
      `/^(MemFree|MemAvailable):/ { v = $2 > kb ? kb : $2; printf "%-16s%d kB\\n", $1, v; next } { print }' ` +
      `/proc/meminfo > ${meminfo}`,
    `  mount --bind ${meminfo} /proc/meminfo`,
    "fi",
    `if [ -e ${state}/memory.limit_in_bytes ]; then echo "guard $(cat ${cg}/memory.limit_in_bytes)"; exit 0; fi`,
    `if [ ! -w ${cg}/memory.limit_in_bytes ]; then echo "no guard: ${cg}/memory.limit_in_bytes is not writable (cgroup v2?)"; exit 0; fi`,
    `if [ "$(cat ${cg}/memory.limit_in_bytes)" -le ${guardBytes} ]; then echo "no guard: the node's memory limit is already $(cat ${cg}/memory.limit_in_bytes)"; exit 0; fi`,
    `cat ${cg}/memory.limit_in_bytes > ${state}/memory.limit_in_bytes`,
    `if [ -e ${cg}/memory.memsw.limit_in_bytes ]; then cat ${cg}/memory.memsw.limit_in_bytes > ${state}/memory.memsw.limit_in_bytes; fi`,
    // Lowering: memory first (memsw may never be below it), then memory+swap.
    `echo ${guardBytes} > ${cg}/memory.limit_in_bytes`,
    `if [ -e ${state}/memory.memsw.limit_in_bytes ]; then echo ${guardBytes} > ${cg}/memory.memsw.limit_in_bytes; fi`,
    `echo "guard ${guardBytes}"`,
  ]);
}

/** Unmounts the meminfo and puts the saved memory limits back. Idempotent. */
export function restoreMemoryCommand(): string[] {
  const { state, memoryCgroup: cg } = SMALL_NODE_PATHS;
  return sh([
    "set -e",
    `if ${MEMINFO_MOUNTED}; then umount /proc/meminfo; fi`,
    // Raising: memory+swap first, then memory.
    `if [ -e ${state}/memory.memsw.limit_in_bytes ]; then cat ${state}/memory.memsw.limit_in_bytes > ${cg}/memory.memsw.limit_in_bytes; fi`,
    `if [ -e ${state}/memory.limit_in_bytes ]; then cat ${state}/memory.limit_in_bytes > ${cg}/memory.limit_in_bytes; fi`,
    `rm -rf ${state}`,
  ]);
}

/**
 * Stops the kubelet, copies its root directory (not the pod volumes mounted below it) onto a
 * `bytes` tmpfs, bind-mounts that over the root directory and starts the kubelet again. On a
 * failure the kubelet is started on its old directory. Idempotent.
 */
export function shrinkNodefsCommand(bytes: number): string[] {
  const { kubeletRoot: root, nodefsStage: stage, nodefsSource: source } = SMALL_NODE_PATHS;
  return sh([
    "set -e",
    `if ${NODEFS_MOUNTED}; then exit 0; fi`,
    `mkdir -p ${stage}`,
    `mount -t tmpfs -o size=${bytes},mode=$(stat -c %a ${root}) ${source} ${stage}`,
    "systemctl stop kubelet",
    `if ! cp -a --one-file-system ${root}/. ${stage}/ || ! mount --bind ${stage} ${root}; then`,
    `  umount ${stage}; rmdir ${stage}; systemctl start kubelet; exit 1`,
    "fi",
    // The stage is a peer of the bind: unmounted before the kubelet mounts pod volumes below it.
    `umount ${stage}`,
    `rmdir ${stage}`,
    "systemctl start kubelet",
  ]);
}

/**
 * Stops the kubelet, unmounts the small filesystem (and the pod volumes mounted on it) and starts
 * the kubelet on its own directory again. Idempotent.
 */
export function restoreNodefsCommand(): string[] {
  const root = SMALL_NODE_PATHS.kubeletRoot;
  return sh([
    "set -e",
    `if ! ${NODEFS_MOUNTED}; then exit 0; fi`,
    "systemctl stop kubelet",
    `umount -R ${root} || umount -R -l ${root} || { systemctl start kubelet; exit 1; }`,
    "systemctl start kubelet",
  ]);
}

/** Exits 0 when the node shows its kubelet a small `kind` (meminfo or kubelet filesystem). */
export function shrunkCommand(kind: "memory" | "disk"): string[] {
  return sh([kind === "memory" ? MEMINFO_MOUNTED : NODEFS_MOUNTED]);
}
