// `rekindle kind build-controller-image`: the in-cluster controller image (rekindle:<version>, the
// tag deploy/controller/deployment.yaml names) built from the repository's Dockerfile by an
// engine that can pull nothing and whose builds reach no registry. Its base is a stand-in for
// node:22-slim made here (node-base.ts); npm installs from a cache this machine's npm filled
// (npm-cache.ts); the build runs with no network at all. The image carries a hash of what it was
// built from and is rebuilt only when that changes (or with `force`).
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { RekindleError } from "../../../errors.js";
import { PROJECT_ROOT } from "../../../util/project-files.js";
import { cacheRoot } from "../../../util/paths.js";
import { silentProgress, type Progress } from "../../../util/progress.js";
import { withBuildLock } from "../../../build/build-lock.js";
import { contextHash, dockerfileContextSources, linkTree, writeBuildContext } from "./build-context.js";
import { DockerCli } from "./docker-cli.js";
import {
  ensureNodeBaseImage,
  findNodeRuntime,
  nodeBaseInputs,
  nodeBaseTag,
  type NodeRuntime,
} from "./node-base.js";
import { ensureNpmCache } from "./npm-cache.js";

/** The image label holding the hash of its inputs (Dockerfile, the context it copies, the base). */
export const INPUTS_LABEL = "dev.rekindle.inputs";

/** Where the Dockerfile takes npm's cache from in the context (docker/npm-cache/README.md). */
export const NPM_CACHE_CONTEXT_PATH = "docker/npm-cache";

/** Bumped when the build below changes in a way its inputs do not show. */
const BUILD_REVISION = 1;

export interface ControllerImageOptions {
  /** Default `rekindle:<version in package.json>`. */
  tag?: string;
  /**
   * The Dockerfile's NODE_IMAGE: an image the engine has. Default: the stand-in made from this
   * machine's Node.js (ensureNodeBaseImage), made first when missing.
   */
  nodeImage?: string;
  /** The checkout whose Dockerfile and sources are built. Default: rekindle's own. */
  projectRoot?: string;
  /** Default cacheRoot(). */
  cacheDir?: string;
  /** Rebuild even when the engine has an image built from the same inputs. Default false. */
  force?: boolean;
  /** The engine's CLI. Default "docker" (DOCKER_HOST picks the engine). */
  dockerBinary?: string;
  progress?: Progress;
  signal?: AbortSignal;
}

export interface ControllerImage {
  tag: string;
  id: string;
  /** False when the engine already had it, built from the same inputs. */
  built: boolean;
  /** The base both stages were built on. */
  nodeImage: string;
  /** The inputs hash (the image's INPUTS_LABEL). */
  inputs: string;
}

/** What the image would be built from; computing it builds nothing. */
export interface ControllerImagePlan {
  tag: string;
  nodeImage: string;
  /** The context paths the Dockerfile copies, Dockerfile first. */
  paths: string[];
  inputs: string;
  /** The runtime the default base is made from (undefined when nodeImage was given). */
  runtime: NodeRuntime | undefined;
}

export async function planControllerImage(
  options: ControllerImageOptions = {},
): Promise<ControllerImagePlan> {
  const root = options.projectRoot ?? PROJECT_ROOT;
  const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string })
    .version;
  const paths = ["Dockerfile", ...dockerfileContextSources(readFileSync(join(root, "Dockerfile"), "utf8"))];
  if (!paths.includes(NPM_CACHE_CONTEXT_PATH)) {
    throw new RekindleError("BUILD_FAILED", `the Dockerfile no longer copies ${NPM_CACHE_CONTEXT_PATH}`, {
      hint: "the offline build puts npm's cache there (docker/npm-cache/README.md)",
    });
  }
  let runtime: NodeRuntime | undefined;
  let nodeImage = options.nodeImage;
  if (nodeImage === undefined) {
    runtime = await findNodeRuntime(process.execPath, options.signal);
    nodeImage = nodeBaseTag(await nodeBaseInputs(runtime));
  }
  const inputs = contextHash(root, paths, [`revision ${BUILD_REVISION}`, `NODE_IMAGE=${nodeImage}`]);
  return { tag: options.tag ?? `rekindle:${version}`, nodeImage, paths, inputs, runtime };
}

/** The `docker build` of the plan in `contextDir` (legacy builder: DockerCli sets DOCKER_BUILDKIT=0). */
export function controllerBuildArgs(
  plan: Pick<ControllerImagePlan, "tag" | "nodeImage" | "inputs">,
  contextDir: string,
): string[] {
  return [
    "build",
    // npm installs from the cache in the context: nothing in the build may reach a network.
    "--network",
    "none",
    "--force-rm",
    "--tag",
    plan.tag,
    "--label",
    `${INPUTS_LABEL}=${plan.inputs}`,
    "--build-arg",
    `NODE_IMAGE=${plan.nodeImage}`,
    "--build-arg",
    "NPM_OFFLINE=true",
    contextDir,
  ];
}

/** The image when the engine has it built from the plan's inputs, without building anything. */
export async function cachedControllerImage(
  options: ControllerImageOptions = {},
): Promise<ControllerImage | undefined> {
  const plan = await planControllerImage(options);
  return current(dockerCli(options), plan);
}

function dockerCli(options: ControllerImageOptions): DockerCli {
  return new DockerCli({
    ...(options.dockerBinary ? { binary: options.dockerBinary } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

async function current(docker: DockerCli, plan: ControllerImagePlan): Promise<ControllerImage | undefined> {
  if ((await docker.imageLabel(plan.tag, INPUTS_LABEL)) !== plan.inputs) return undefined;
  const id = await docker.imageId(plan.tag);
  return id === undefined
    ? undefined
    : { tag: plan.tag, id, built: false, nodeImage: plan.nodeImage, inputs: plan.inputs };
}

/** Returns the controller image, building it when the engine lacks it or has it from other inputs. */
export async function ensureControllerImage(options: ControllerImageOptions = {}): Promise<ControllerImage> {
  const root = options.projectRoot ?? PROJECT_ROOT;
  const cacheDir = options.cacheDir ?? cacheRoot();
  const progress = options.progress ?? silentProgress;
  const signal = options.signal;
  const signalOption = signal ? { signal } : {};
  const docker = dockerCli(options);
  const plan = await planControllerImage(options);
  if (options.force !== true) {
    const cached = await current(docker, plan);
    if (cached) {
      progress.info(`controller image ${plan.tag}: cached in the engine (inputs ${plan.inputs})`);
      return cached;
    }
  }
  progress.info(
    `building controller image ${plan.tag} from ${join(root, "Dockerfile")} on ${plan.nodeImage}`,
  );
  let runtime = plan.runtime;
  if (runtime !== undefined) {
    await ensureNodeBaseImage({
      runtime,
      cacheDir,
      progress,
      ...signalOption,
      ...(options.dockerBinary ? { dockerBinary: options.dockerBinary } : {}),
    });
  } else if ((await docker.imageId(plan.nodeImage)) === undefined) {
    throw new RekindleError(
      "NOT_FOUND",
      `the engine has no ${plan.nodeImage} (NODE_IMAGE) and this build pulls nothing`,
      {
        hint: "load or build that image first, or leave nodeImage unset for the stand-in made from this machine's Node.js",
      },
    );
  }
  // The npm that fills the cache: the one the build stage runs, when the base is the stand-in.
  runtime ??= await findNodeRuntime(process.execPath, signal);

  // One build at a time per cache (the sim's and node image's lock: 2 cores do not gain from two).
  return withBuildLock(cacheDir, progress, signal, async () => {
    if (options.force !== true) {
      const cached = await current(docker, plan);
      if (cached) return cached;
    }
    const npmCache = await ensureNpmCache({
      cacheDir,
      projectRoot: root,
      runtime,
      progress,
      ...signalOption,
    });
    const contextDir = join(cacheDir, "kind", "work", `controller-${plan.inputs}`);
    const phase = progress.phase(`building ${plan.tag} (docker build, no network)`);
    try {
      writeBuildContext(root, plan.paths.slice(1), contextDir);
      linkTree(npmCache, join(contextDir, NPM_CACHE_CONTEXT_PATH));
      await docker.stream(controllerBuildArgs(plan, contextDir), (line) => {
        if (/^Step \d+\/\d+ :/.test(line)) phase.update(line);
      });
      const image = await current(docker, plan);
      if (image === undefined)
        throw new RekindleError(
          "BUILD_FAILED",
          `the engine has no ${plan.tag} from inputs ${plan.inputs} after building it`,
        );
      if (plan.runtime !== undefined) await removeStaleBuilds(docker, plan.nodeImage);
      phase.end(`${plan.tag} built`);
      return { ...image, built: true };
    } catch (error) {
      phase.end("failed");
      throw error instanceof RekindleError && error.code !== "COMMAND_FAILED"
        ? error
        : new RekindleError("BUILD_FAILED", `docker build of ${plan.tag} failed`, {
            hint: "the build stage runs npm ci --offline from the cache this machine's npm filled; docker build's last lines are below",
            cause: error,
            ...(error instanceof RekindleError ? { details: error.details } : {}),
          });
    } finally {
      rmSync(contextDir, { recursive: true, force: true });
    }
  });
}

/**
 * Removes what earlier builds left untagged (their build stage, the image the tag named before):
 * with the lib/ copy ahead of `npm ci`, a changed source rebuilds them all anyway, so they are
 * no cache, only some 400 MB each. Only images descending from the stand-in base count (nobody
 * else builds on it), and none in use (no force).
 */
async function removeStaleBuilds(docker: DockerCli, base: string): Promise<void> {
  const baseId = await docker.imageId(base);
  if (baseId === undefined) return;
  const dangling = (await docker.run(["images", "--quiet", "--no-trunc", "--filter", "dangling=true"]))
    .split("\n")
    .filter((id) => id !== "");
  const stale: string[] = [];
  for (const id of dangling) {
    const history = await docker.run(["history", "--quiet", "--no-trunc", id]).catch(() => "");
    if (history.split("\n").includes(baseId)) stale.push(id);
  }
  if (stale.length > 0) await docker.removeImages(stale);
}
