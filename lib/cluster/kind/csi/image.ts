// The CSI driver's one image: the two static binaries (external-attacher, our plugin) in a directory
// imported by the engine, as the node image's component images are made. Nothing is pulled; the tag
// names both versions, so an image the engine has is never rebuilt.
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { DockerCli } from "../image/docker-cli.js";
import type { CsiBinaries } from "./build.js";

/** docker.io/rekindle/csi:<attacher version>-<plugin version>. */
export function csiImageTag(versions: CsiBinaries["versions"]): string {
  return `docker.io/rekindle/csi:${versions.csiAttacher}-${versions.csiShared}`;
}

/** Returns the image's tag, importing it first when the engine lacks it. */
export async function ensureCsiImage(
  docker: DockerCli,
  binaries: CsiBinaries,
  workDir: string,
): Promise<string> {
  const tag = csiImageTag(binaries.versions);
  if ((await docker.imageId(tag)) !== undefined) return tag;
  mkdirSync(workDir, { recursive: true });
  const dir = mkdtempSync(join(workDir, "csi-image-"));
  try {
    const bin = join(dir, "usr", "local", "bin");
    mkdirSync(bin, { recursive: true });
    for (const [name, from] of [
      ["csi-attacher", binaries.csiAttacher],
      ["csi-shared", binaries.csiShared],
    ] as const) {
      copyFileSync(from, join(bin, name));
      chmodSync(join(bin, name), 0o755);
    }
    mkdirSync(join(dir, "etc"));
    mkdirSync(join(dir, "tmp"));
    chmodSync(join(dir, "tmp"), 0o1777);
    writeFileSync(join(dir, "etc", "passwd"), "root:x:0:0:root:/root:/sbin/nologin\n");
    writeFileSync(join(dir, "etc", "group"), "root:x:0:\n");
    await docker.importDirectory(dir, tag, ["ENV PATH=/usr/local/bin:/usr/bin:/bin"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return tag;
}
