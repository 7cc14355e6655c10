// Stand-in kind nodes for tests on a real Docker Engine without pulling images: a busybox image
// imported from Debian's busybox-static, run as containers named and labelled the way kind does.
import { execa } from "execa";
import { mkdtempSync, mkdirSync, copyFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const STAND_IN_IMAGE = "rekindle/stand-in-node:busybox";

export async function dockerAvailable(): Promise<boolean> {
  const result = await execa("docker", ["info", "--format", "{{.ServerVersion}}"], {
    reject: false,
    timeout: 10_000,
  });
  return result.exitCode === 0;
}

export async function ensureStandInImage(): Promise<void> {
  if ((await execa("docker", ["image", "inspect", STAND_IN_IMAGE], { reject: false })).exitCode === 0) return;
  const root = mkdtempSync(join(tmpdir(), "rekindle-rootfs-"));
  mkdirSync(join(root, "bin"));
  copyFileSync("/bin/busybox", join(root, "bin", "busybox"));
  for (const applet of ["sh", "sleep"]) symlinkSync("busybox", join(root, "bin", applet));
  const archive = join(mkdtempSync(join(tmpdir(), "rekindle-image-")), "rootfs.tar");
  await execa("tar", ["-C", root, "-cf", archive, "."]);
  await execa("docker", ["import", archive, STAND_IN_IMAGE]);
}

/** Starts `<cluster>-worker`, `<cluster>-worker2`, … labelled like kind's node containers. */
export async function startStandInNodes(cluster: string, workers: number): Promise<string[]> {
  await ensureStandInImage();
  const names = Array.from({ length: workers }, (_, i) => `${cluster}-worker${i === 0 ? "" : String(i + 1)}`);
  for (const name of names) {
    await execa("docker", [
      "run",
      "-d",
      "--name",
      name,
      "--label",
      `io.x-k8s.kind.cluster=${cluster}`,
      "--label",
      "io.x-k8s.kind.role=worker",
      "--label",
      "rekindle.dev/run=test",
      STAND_IN_IMAGE,
      "/bin/sleep",
      "3600",
    ]);
  }
  return names;
}

export async function removeStandInNodes(cluster: string): Promise<void> {
  const ids = (
    await execa("docker", ["ps", "-aq", "--filter", `label=io.x-k8s.kind.cluster=${cluster}`])
  ).stdout
    .split("\n")
    .filter(Boolean);
  if (ids.length > 0) await execa("docker", ["rm", "-f", ...ids]);
}
