// Stand-in kind nodes for tests on a real Docker Engine without pulling images: a busybox image
// imported from Debian's busybox-static, run as containers named and labelled the way kind does.
import { execa } from "execa";
import { mkdtempSync, mkdirSync, copyFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const STAND_IN_IMAGE = "rekindle/stand-in-node:busybox";
/** The same busybox with the applets the kind provider's node commands use (pressure, probes). */
export const STAND_IN_TOOLS_IMAGE = "rekindle/stand-in-node:busybox-tools";
const TOOLS_APPLETS = [
  "sh",
  "sleep",
  "cat",
  "mkdir",
  "rm",
  "rmdir",
  "mount",
  "umount",
  "grep",
  "dd",
  "df",
  "fallocate",
  "ls",
  "stat",
  "test",
  "true",
];

export async function dockerAvailable(): Promise<boolean> {
  const result = await execa("docker", ["info", "--format", "{{.ServerVersion}}"], {
    reject: false,
    timeout: 10_000,
  });
  return result.exitCode === 0;
}

/** Imports `image` from /bin/busybox (no pull) unless present; the tools image gets more applets. */
export async function ensureStandInImage(image: string = STAND_IN_IMAGE): Promise<void> {
  if ((await execa("docker", ["image", "inspect", image], { reject: false })).exitCode === 0) return;
  const applets = image === STAND_IN_TOOLS_IMAGE ? TOOLS_APPLETS : ["sh", "sleep"];
  const root = mkdtempSync(join(tmpdir(), "rekindle-rootfs-"));
  mkdirSync(join(root, "bin"));
  // Mount points a shell and fallocate/dd expect to find (docker mounts /proc and /dev over them).
  for (const dir of ["proc", "dev", "run", "var", "etc", "tmp"]) mkdirSync(join(root, dir));
  copyFileSync("/bin/busybox", join(root, "bin", "busybox"));
  for (const applet of applets) symlinkSync("busybox", join(root, "bin", applet));
  const archive = join(mkdtempSync(join(tmpdir(), "rekindle-image-")), "rootfs.tar");
  await execa("tar", ["-C", root, "-cf", archive, "."]);
  await execa("docker", ["import", "--change", "ENV PATH=/bin", archive, image]);
}

export interface StandInOptions {
  /** Default STAND_IN_IMAGE (sh and sleep only); STAND_IN_TOOLS_IMAGE for node commands. */
  image?: string;
  /**
   * Capabilities to mount a tmpfs inside (memory pressure). `--privileged` does not work on every
   * engine (rootless, some CI sandboxes); all capabilities but SYS_RESOURCE do the same here.
   */
  canMount?: boolean;
}

function standInRunArgs(cluster: string, name: string, role: string, options: StandInOptions): string[] {
  return [
    "run",
    "-d",
    "--name",
    name,
    "--hostname",
    name,
    "--label",
    `io.x-k8s.kind.cluster=${cluster}`,
    "--label",
    `io.x-k8s.kind.role=${role}`,
    "--label",
    "rekindle.dev/run=test",
    // kind's own restart policy for its node containers.
    "--restart",
    "on-failure:1",
    ...(options.canMount === true
      ? ["--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE", "--security-opt", "apparmor=unconfined"]
      : []),
  ];
}

/** Starts `<cluster>-worker`, `<cluster>-worker2`, … labelled like kind's node containers. */
export async function startStandInNodes(
  cluster: string,
  workers: number,
  options: StandInOptions = {},
): Promise<string[]> {
  const image = options.image ?? STAND_IN_IMAGE;
  await ensureStandInImage(image);
  const names = Array.from({ length: workers }, (_, i) => `${cluster}-worker${i === 0 ? "" : String(i + 1)}`);
  for (const name of names) {
    await execa("docker", [...standInRunArgs(cluster, name, "worker", options), image, "/bin/sleep", "3600"]);
  }
  return names;
}

/**
 * Starts `<cluster>-control-plane` the way `kind get kubeconfig` reads one: it holds a kubeadm-style
 * /etc/kubernetes/admin.conf and names its API endpoint with Docker Desktop's port label, so kind
 * needs no published port. `server` is what kind writes into the kubeconfig it prints.
 */
export async function startStandInControlPlane(
  cluster: string,
  server = "127.0.0.1:6443",
  options: StandInOptions = {},
): Promise<string> {
  await ensureStandInImage(STAND_IN_TOOLS_IMAGE);
  const name = `${cluster}-control-plane`;
  const adminConf = [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${cluster}`,
    "  cluster:",
    `    server: https://${name}:6443`,
    "users:",
    "- name: kubernetes-admin",
    "  user:",
    "    token: stand-in",
    "contexts:",
    "- name: kubernetes-admin@" + cluster,
    "  context:",
    `    cluster: ${cluster}`,
    "    user: kubernetes-admin",
    `current-context: kubernetes-admin@${cluster}`,
    "",
  ].join("\n");
  await execa("docker", [
    ...standInRunArgs(cluster, name, "control-plane", options),
    "--label",
    `desktop.docker.io/ports/6443/tcp=${server}`,
    "--env",
    `ADMIN_CONF=${adminConf}`,
    STAND_IN_TOOLS_IMAGE,
    "/bin/sh",
    "-c",
    'mkdir -p /etc/kubernetes && printf "%s" "$ADMIN_CONF" > /etc/kubernetes/admin.conf && exec sleep 3600',
  ]);
  return name;
}

export async function removeStandInNodes(cluster: string): Promise<void> {
  const ids = (
    await execa("docker", ["ps", "-aq", "--filter", `label=io.x-k8s.kind.cluster=${cluster}`])
  ).stdout
    .split("\n")
    .filter(Boolean);
  if (ids.length > 0) await execa("docker", ["rm", "-f", ...ids]);
}

/**
 * Whether `docker exec --privileged` works (kind runs every node command that way). It does not
 * where the engine's own capability bounding set lacks one (some CI sandboxes drop SYS_RESOURCE).
 */
export async function privilegedExecWorks(container: string): Promise<boolean> {
  const result = await execa("docker", ["exec", "--privileged", container, "true"], { reject: false });
  return result.exitCode === 0;
}
