// `rekindle kind build-image`: rekindle's offline kind node image, for machines that cannot pull
// kindest/node. Made from Debian packages (mmdebstrap) and Go modules only; every part is cached
// (Go binaries and root filesystems under <cache>/kind/, the image in the engine), and an image
// the engine already has under the recipe's tag is never rebuilt.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RekindleError } from "../../../errors.js";
import { cacheRoot } from "../../../util/paths.js";
import { silentProgress, type Progress } from "../../../util/progress.js";
import { ensureSimBinaries } from "../../../build/sim-binaries.js";
import { withBuildLock } from "../../../build/build-lock.js";
import { findGoToolchain } from "../../../build/go-toolchain.js";
import { buildComponentImages } from "./component-images.js";
import { DockerCli } from "./docker-cli.js";
import { ensureNodeImageBinaries, type NodeImageBinaries } from "./go-parts.js";
import { kindModuleDir, prepareNodeRoot } from "./node-root.js";
import {
  NODE_IMAGE_VERSIONS,
  NODE_PACKAGES,
  nodeImageTag,
  recipeHash,
  USERLAND_PACKAGES,
  type NodeImageVersions,
} from "./recipe.js";
import { ensureRootfs } from "./rootfs.js";

export interface NodeImageOptions {
  /** Default NODE_IMAGE_VERSIONS. */
  versions?: NodeImageVersions;
  /** Default cacheRoot(). */
  cacheDir?: string;
  /** Rebuild even when the engine has the image. Default false. */
  force?: boolean;
  /** The engine's CLI. Default "docker" (DOCKER_HOST picks the engine). */
  dockerBinary?: string;
  progress?: Progress;
  signal?: AbortSignal;
}

export interface NodeImage {
  tag: string;
  id: string;
  /** False when the engine already had it. */
  built: boolean;
}

/** The image's tag when the engine has it, without building anything. */
export async function cachedNodeImage(options: NodeImageOptions = {}): Promise<NodeImage | undefined> {
  const tag = nodeImageTag(options.versions ?? NODE_IMAGE_VERSIONS);
  const id = await new DockerCli(options.dockerBinary ? { binary: options.dockerBinary } : {}).imageId(tag);
  return id === undefined ? undefined : { tag, id, built: false };
}

function requireRoot(): void {
  if (process.getuid?.() !== 0) {
    throw new RekindleError(
      "PRECONDITION",
      "building the offline kind node image needs root (mmdebstrap, tar with device files, chroot)",
      {
        hint: "run `rekindle kind build-image` as root once (the image is cached in the engine), or use a pullable image: --image kindest",
      },
    );
  }
}

/** Returns the node image, building it when the engine lacks it (minutes cold; ~1 min from cached parts). */
export async function ensureNodeImage(options: NodeImageOptions = {}): Promise<NodeImage> {
  const versions = options.versions ?? NODE_IMAGE_VERSIONS;
  const cacheDir = options.cacheDir ?? cacheRoot();
  const progress = options.progress ?? silentProgress;
  const signal = options.signal;
  const docker = new DockerCli({
    ...(options.dockerBinary ? { binary: options.dockerBinary } : {}),
    ...(signal ? { signal } : {}),
  });
  const tag = nodeImageTag(versions);
  if (options.force !== true) {
    const id = await docker.imageId(tag);
    if (id !== undefined) {
      progress.info(`kind node image ${tag}: cached in the engine`);
      return { tag, id, built: false };
    }
  }
  requireRoot();
  const started = Date.now();
  progress.info(
    `building kind node image ${tag} (Kubernetes ${versions.kubernetes}, kind ${versions.kind} base files, Debian ${versions.debian}); parts are cached in ${join(cacheDir, "kind")}`,
  );
  const signalOption = signal ? { signal } : {};
  await ensureSimBinaries({ cacheDir, progress, ...signalOption });
  const binaries = await ensureNodeImageBinaries({ versions, cacheDir, progress, ...signalOption });
  const go = await findGoToolchain({ minimumVersion: "1.17" });
  const kindModule = await kindModuleDir(go, versions.kind, signal);

  // One rootfs and assembly at a time per cache (their files and container names are the
  // recipe's); a build that waited may find the image made by the other.
  return withBuildLock(cacheDir, progress, signal, async () => {
    const id = options.force === true ? undefined : await docker.imageId(tag);
    if (id !== undefined) return { tag, id, built: false };
    const nodeRootfs = await ensureRootfs({
      cacheDir,
      name: "node",
      suite: versions.debian,
      packages: NODE_PACKAGES,
      progress,
      ...signalOption,
    });
    const userlandRootfs = await ensureRootfs({
      cacheDir,
      name: "userland",
      suite: versions.debian,
      packages: USERLAND_PACKAGES,
      progress,
      ...signalOption,
    });
    return assemble({
      docker,
      tag,
      versions,
      cacheDir,
      progress,
      signal,
      binaries,
      nodeRootfs,
      userlandRootfs,
      kindModule,
      started,
    });
  });
}

/** What the assembly works from: every part already built or fetched. */
interface AssemblyInputs {
  docker: DockerCli;
  tag: string;
  versions: NodeImageVersions;
  cacheDir: string;
  progress: Progress;
  signal: AbortSignal | undefined;
  binaries: NodeImageBinaries;
  nodeRootfs: string;
  userlandRootfs: string;
  kindModule: string;
  /** When the build began (Date.now()), for the manifest's duration. */
  started: number;
}

async function assemble(inputs: AssemblyInputs): Promise<NodeImage> {
  const { docker, tag, versions, signal } = inputs;
  const signalOption = signal ? { signal } : {};
  const workDir = join(inputs.cacheDir, "kind", "work", `node-${recipeHash(versions)}`);
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(join(workDir, "root"), { recursive: true });
  const stage = `rekindle/node-stage:${recipeHash(versions)}`;
  const preloaded = `rekindle/node-preloaded:${recipeHash(versions)}`;
  const preloader = `rekindle-node-preload-${recipeHash(versions)}`;
  let componentRefs: string[] = [];
  const phase = inputs.progress.phase("assembling the node image");
  try {
    phase.update("node root filesystem (rootfs, kind base files, kubelet, kubeadm, kubectl)");
    await prepareNodeRoot({
      root: join(workDir, "root"),
      rootfsTar: inputs.nodeRootfs,
      kindModule: inputs.kindModule,
      binaries: inputs.binaries,
      versions,
      ...signalOption,
    });
    await docker.importDirectory(join(workDir, "root"), stage, [
      "ENV container=docker",
      'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]',
    ]);
    rmSync(join(workDir, "root"), { recursive: true, force: true });

    phase.update("component images (control plane, etcd, CoreDNS, pause, kube-proxy, pod network, storage)");
    componentRefs = await buildComponentImages({
      docker,
      workDir,
      userlandTar: inputs.userlandRootfs,
      binaries: inputs.binaries,
      versions,
    });
    const imagesTar = join(workDir, "images.tar");
    await docker.run(["save", "-o", imagesTar, ...componentRefs]);

    // Preload: containerd inside a node container imports them into its k8s.io namespace, so
    // kubeadm and the manifests find every image and pull nothing. /var survives kind's /var volume.
    phase.update("preloading the images into the node's containerd");
    await docker.run(["rm", "-f", preloader]).catch(() => undefined);
    await docker.run([
      "run",
      "-d",
      "--name",
      preloader,
      "--privileged",
      "--entrypoint",
      "sleep",
      "-v",
      `${imagesTar}:/images.tar:ro`,
      stage,
      "infinity",
    ]);
    await docker.run([
      "exec",
      preloader,
      "sh",
      "-c",
      [
        "containerd >/tmp/containerd.log 2>&1 & pid=$!",
        "for i in $(seq 1 60); do ctr version >/dev/null 2>&1 && break; sleep 0.5; done",
        "ctr -n k8s.io images import --all-platforms --no-unpack /images.tar >/dev/null || { cat /tmp/containerd.log; exit 1; }",
        "kill $pid; wait $pid; rm -f /tmp/containerd.log",
      ].join("\n"),
    ]);
    // The preloader ran `sleep infinity`: give the node its entrypoint back.
    await docker.run([
      "commit",
      "--change",
      'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]',
      "--change",
      "CMD []",
      preloader,
      preloaded,
    ]);
    // docker commit cannot set STOPSIGNAL; a one-line build on top can (metadata only). kind
    // nodes halt in order on SIGRTMIN+3, systemd's signal for it.
    await docker.run(["build", "-q", "-t", tag, "-"], `FROM ${preloaded}\nSTOPSIGNAL SIGRTMIN+3\n`);
    const id = await docker.imageId(tag);
    if (id === undefined)
      throw new RekindleError("BUILD_FAILED", `the engine has no ${tag} after building it`);
    const seconds = Math.round((Date.now() - inputs.started) / 1000);
    writeFileSync(
      join(inputs.cacheDir, "kind", `node-image-${recipeHash(versions)}.json`),
      JSON.stringify({ tag, id, versions, builtAt: new Date().toISOString(), seconds }, null, 2),
    );
    phase.end(`${tag} built`);
    return { tag, id, built: true };
  } catch (error) {
    phase.end("failed");
    throw error instanceof RekindleError
      ? error
      : new RekindleError("BUILD_FAILED", `assembling kind node image ${tag} failed`, {
          cause: error,
          hint: "the command and its output are above",
        });
  } finally {
    await docker.run(["rm", "-f", preloader]).catch(() => undefined);
    await docker.removeImages([preloaded, stage, ...componentRefs]);
    rmSync(workDir, { recursive: true, force: true });
  }
}
