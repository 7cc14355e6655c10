// Real kubelet pressure inside a kind node container: memory = a file in a tmpfs mounted in the
// node (tmpfs pages are charged to the node's memory cgroup, which the kubelet measures), disk =
// a file in /var/lib/kubelet (the kubelet's nodefs is the filesystem holding it). small-node.ts
// makes both signals small enough for a fill of about a GiB.
import type { PressureKind } from "../provider.js";
import { MiB } from "./quantity.js";
import type { KindNodes } from "./nodes.js";

export const PRESSURE_PATHS = {
  memoryMount: "/run/rekindle-pressure",
  memoryFile: "/run/rekindle-pressure/fill",
  /** The kubelet's root directory: its filesystem is nodefs. */
  diskDir: "/var/lib/kubelet",
  diskFile: "/var/lib/kubelet/rekindle-pressure.fill",
} as const;

function fillFile(kind: PressureKind): string {
  return kind === "memory" ? PRESSURE_PATHS.memoryFile : PRESSURE_PATHS.diskFile;
}

/** Writes `bytes` (whole MiB) to `file`: fallocate, or dd where the filesystem cannot fallocate. */
function writeFile(file: string, bytes: number): string {
  const mib = Math.ceil(bytes / MiB);
  return `fallocate -l ${mib * MiB} ${file} 2>/dev/null || dd if=/dev/zero of=${file} bs=1048576 count=${mib} 2>&1`;
}

/** The command that fills the node (argv for exec). `bytes` is rounded up to whole MiB. */
export function fillCommand(kind: PressureKind, bytes: number): string[] {
  const mib = Math.ceil(bytes / MiB);
  if (kind === "disk") {
    const { diskDir, diskFile } = PRESSURE_PATHS;
    return ["sh", "-c", `set -e; mkdir -p ${diskDir}; ${writeFile(diskFile, bytes)}`];
  }
  const mount = PRESSURE_PATHS.memoryMount;
  // The tmpfs is 1 MiB larger than the file: room for its own metadata.
  return [
    "sh",
    "-c",
    [
      "set -e",
      `mkdir -p ${mount}`,
      `grep -q ' ${mount} ' /proc/mounts || mount -t tmpfs -o size=${(mib + 1) * MiB} rekindle-pressure ${mount}`,
      writeFile(PRESSURE_PATHS.memoryFile, bytes),
    ].join("; "),
  ];
}

/** Removes the fill (and for memory unmounts the tmpfs); succeeds when nothing is there. */
export function relieveCommand(kind: PressureKind): string[] {
  if (kind === "disk") return ["sh", "-c", `rm -f ${PRESSURE_PATHS.diskFile}`];
  const mount = PRESSURE_PATHS.memoryMount;
  return [
    "sh",
    "-c",
    [
      `rm -f ${PRESSURE_PATHS.memoryFile}`,
      `if grep -q ' ${mount} ' /proc/mounts; then umount ${mount}; fi`,
      `rmdir ${mount} 2>/dev/null || true`,
    ].join("; "),
  ];
}

/** Exits 0 when the node carries this kind's fill. */
export function presentCommand(kind: PressureKind): string[] {
  return ["sh", "-c", `test -e ${fillFile(kind)}`];
}

export async function hasFill(nodes: KindNodes, node: string, kind: PressureKind): Promise<boolean> {
  return (await nodes.exec(node, presentCommand(kind))).exitCode === 0;
}

/** Writes the fill; on failure removes whatever part of it was written, then throws. */
export async function fillNode(
  nodes: KindNodes,
  node: string,
  kind: PressureKind,
  bytes: number,
): Promise<void> {
  try {
    await nodes.run(node, fillCommand(kind, bytes), `writing the ${kind} pressure fill`);
  } catch (error) {
    await nodes.exec(node, relieveCommand(kind)).catch(() => undefined);
    throw error;
  }
}

export async function relieveNode(nodes: KindNodes, node: string, kind: PressureKind): Promise<void> {
  await nodes.run(node, relieveCommand(kind), `removing the ${kind} pressure fill`);
}
