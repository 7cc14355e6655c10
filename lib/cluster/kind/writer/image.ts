// The writer workload's image: its one static binary, imported by the engine and loaded into the
// kind nodes like the CSI driver's (never pulled; the node image's recipe is untouched). The tag is
// the binary's source hash, so an image the engine has is never rebuilt.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { cacheRoot } from "../../../util/paths.js";
import type { Progress } from "../../../util/progress.js";
import type { KindCli } from "../cli.js";
import { staticImage } from "../image/component-images.js";
import { DockerCli } from "../image/docker-cli.js";
import { ensureWriterBinary, type WriterBinary } from "./build.js";

/** docker.io/rekindle/writer:<source hash>. */
export function writerImageTag(version: WriterBinary["version"]): string {
  return `docker.io/rekindle/writer:${version}`;
}

/** Returns the image's tag, importing it first when the engine lacks it. */
export async function ensureWriterImage(
  docker: DockerCli,
  binary: WriterBinary,
  workDir: string,
): Promise<string> {
  const tag = writerImageTag(binary.version);
  if ((await docker.imageId(tag)) !== undefined) return tag;
  mkdirSync(workDir, { recursive: true });
  await staticImage(docker, workDir, tag, binary.path);
  return tag;
}

/** Builds (cached) and loads the writer's image into every node of `cluster`; returns its tag. */
export async function loadWriterImage(options: {
  cli: KindCli;
  cluster: string;
  /** Default cacheRoot(). */
  cacheDir?: string;
  /** Default: a DockerCli on DOCKER_HOST's engine. */
  docker?: DockerCli;
  progress: Progress;
  signal?: AbortSignal;
}): Promise<string> {
  const { progress, signal } = options;
  const cacheDir = options.cacheDir ?? cacheRoot();
  const binary = await ensureWriterBinary({ cacheDir, progress, ...(signal ? { signal } : {}) });
  const docker = options.docker ?? new DockerCli(signal ? { signal } : {});
  const image = await ensureWriterImage(docker, binary, join(cacheDir, "kind", "work"));
  const load = progress.phase(`loading ${image} into kind cluster ${options.cluster}`);
  await options.cli.loadImage(options.cluster, image, signal);
  load.end("loaded");
  return image;
}
