// A stand-in for node:22-slim (the controller image's base) on engines that cannot pull it: a
// Debian minbase root filesystem from mmdebstrap with the Node.js runtime this machine already
// runs (its node binary and the npm installed beside it), laid out in /usr/local as the official
// image has them. Nothing prebuilt is downloaded. Tagged with a hash of its inputs and kept in the
// engine: a base present under its tag is never rebuilt.
import { createHash } from "node:crypto";
import {
  appendFileSync,
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  createReadStream,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { RekindleError } from "../../../errors.js";
import { runCommand } from "../../../util/command.js";
import { cacheRoot, findOnPath } from "../../../util/paths.js";
import { silentProgress, type Progress } from "../../../util/progress.js";
import { withBuildLock } from "../../../build/build-lock.js";
import { DockerCli } from "./docker-cli.js";
import { ensureRootfs } from "./rootfs.js";

/** Debian suite of the root filesystem (the one the node image uses: its tarballs are shared). */
export const NODE_BASE_SUITE = "bookworm";

/**
 * What the node binary links besides glibc (`ldd`: libstdc++ and libgcc_s; minbase has both
 * through apt, named here so the image does not depend on that).
 */
export const NODE_BASE_PACKAGES: readonly string[] = ["libstdc++6", "libgcc-s1"];

/** The official image's user "node": the controller runs as uid/gid 1000 by number. */
export const NODE_BASE_UID = 1000;

/** Bumped when the assembly below changes in a way the inputs do not show. */
const NODE_BASE_REVISION = 1;

export interface NodeRuntime {
  /** The node binary (symlinks resolved). */
  binary: string;
  /** `node --version`, e.g. "v20.20.2". */
  version: string;
  /** npm's package directory, e.g. /usr/lib/node_modules/npm. */
  npmDir: string;
  npmVersion: string;
}

/** Everything the base is made from; its tag is a hash of this. */
export interface NodeBaseInputs {
  suite: string;
  packages: readonly string[];
  nodeVersion: string;
  /** sha256 of the node binary: a rebuilt binary of the same version is another input. */
  nodeSha256: string;
  npmVersion: string;
}

/** rekindle/node-base:20.20.2-<10 hex digits>: the tag says the Node.js version and the inputs. */
export function nodeBaseTag(inputs: NodeBaseInputs): string {
  const hash = createHash("sha256")
    .update(JSON.stringify({ ...inputs, revision: NODE_BASE_REVISION }))
    .digest("hex")
    .slice(0, 10);
  return `rekindle/node-base:${inputs.nodeVersion.replace(/^v/, "")}-${hash}`;
}

/**
 * The npm package directory beside a node binary: <prefix>/lib/node_modules/npm, where both the
 * official tarballs and distribution packages put it, else where `npm` on PATH leads.
 */
export function findNpmDir(nodeBinary: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = [join(dirname(dirname(nodeBinary)), "lib", "node_modules", "npm")];
  const onPath = findOnPath("npm", env);
  // …/node_modules/npm/bin/npm-cli.js
  if (onPath !== undefined) candidates.push(dirname(dirname(realpathSync(onPath))));
  return candidates.find((dir) => packageName(dir) === "npm");
}

function packageName(dir: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string }).name;
  } catch {
    return undefined;
  }
}

/** The Node.js runtime to copy: by default the one running rekindle. */
export async function findNodeRuntime(
  binary: string = process.execPath,
  signal?: AbortSignal,
): Promise<NodeRuntime> {
  const real = realpathSync(binary);
  const npmDir = findNpmDir(real);
  if (npmDir === undefined) {
    throw new RekindleError("NOT_FOUND", `no npm beside ${real} (nor on PATH)`, {
      hint: "the image's build stage runs npm ci: install npm with this Node.js",
    });
  }
  const version = (await runCommand(real, ["--version"], signal ? { signal } : {})).stdout.trim();
  const npmVersion = (JSON.parse(readFileSync(join(npmDir, "package.json"), "utf8")) as { version: string })
    .version;
  return { binary: real, version, npmDir, npmVersion };
}

async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

export async function nodeBaseInputs(runtime: NodeRuntime): Promise<NodeBaseInputs> {
  return {
    suite: NODE_BASE_SUITE,
    packages: NODE_BASE_PACKAGES,
    nodeVersion: runtime.version,
    nodeSha256: await fileSha256(runtime.binary),
    npmVersion: runtime.npmVersion,
  };
}

export interface NodeBaseOptions {
  /** Default: findNodeRuntime() (the Node.js running rekindle). */
  runtime?: NodeRuntime;
  /** Default cacheRoot(). */
  cacheDir?: string;
  /** Rebuild even when the engine has the image. Default false. */
  force?: boolean;
  /** The engine's CLI. Default "docker" (DOCKER_HOST picks the engine). */
  dockerBinary?: string;
  progress?: Progress;
  signal?: AbortSignal;
}

export interface NodeBaseImage {
  tag: string;
  id: string;
  /** False when the engine already had it. */
  built: boolean;
}

/** Returns the base image, making it when the engine lacks it (about a minute; root). */
export async function ensureNodeBaseImage(options: NodeBaseOptions = {}): Promise<NodeBaseImage> {
  const cacheDir = options.cacheDir ?? cacheRoot();
  const progress = options.progress ?? silentProgress;
  const signal = options.signal;
  const signalOption = signal ? { signal } : {};
  const docker = new DockerCli({
    ...(options.dockerBinary ? { binary: options.dockerBinary } : {}),
    ...signalOption,
  });
  const runtime = options.runtime ?? (await findNodeRuntime(process.execPath, signal));
  const inputs = await nodeBaseInputs(runtime);
  const tag = nodeBaseTag(inputs);
  if (options.force !== true) {
    const id = await docker.imageId(tag);
    if (id !== undefined) {
      progress.info(`Node.js base image ${tag}: cached in the engine`);
      return { tag, id, built: false };
    }
  }
  if (process.getuid?.() !== 0) {
    throw new RekindleError(
      "PRECONDITION",
      "making the Node.js base image needs root (mmdebstrap, a root filesystem with device files)",
      {
        hint: "run `rekindle kind build-controller-image` as root once (the base is cached in the engine)",
      },
    );
  }
  return withBuildLock(cacheDir, progress, signal, async () => {
    const id = options.force === true ? undefined : await docker.imageId(tag);
    if (id !== undefined) return { tag, id, built: false };
    const rootfsTar = await ensureRootfs({
      cacheDir,
      name: "node-base",
      suite: inputs.suite,
      packages: inputs.packages,
      progress,
      ...signalOption,
    });
    const workDir = join(cacheDir, "kind", "work", `node-base-${tag.slice(tag.indexOf(":") + 1)}`);
    return assemble(docker, tag, runtime, rootfsTar, workDir, progress);
  });
}

async function assemble(
  docker: DockerCli,
  tag: string,
  runtime: NodeRuntime,
  rootfsTar: string,
  workDir: string,
  progress: Progress,
): Promise<NodeBaseImage> {
  const phase = progress.phase(`making Node.js base image ${tag}`);
  const root = join(workDir, "root");
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  try {
    phase.update(
      `Debian ${NODE_BASE_SUITE} minbase, node ${runtime.version} (${runtime.binary}), npm ${runtime.npmVersion} (${runtime.npmDir})`,
    );
    await runCommand("tar", ["-C", root, "--numeric-owner", "-xf", rootfsTar]);
    installRuntime(root, runtime);
    await docker.importDirectory(root, tag, [
      "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      `ENV NODE_VERSION=${runtime.version.replace(/^v/, "")}`,
      'CMD ["node"]',
    ]);
    phase.update("checking that node and npm run in it as uid 1000");
    await checkRuntime(docker, tag, runtime);
    const id = await docker.imageId(tag);
    if (id === undefined)
      throw new RekindleError("BUILD_FAILED", `the engine has no ${tag} after importing it`);
    phase.end(`${tag} made`);
    return { tag, id, built: true };
  } catch (error) {
    phase.end("failed");
    await docker.removeImages([tag]);
    throw error instanceof RekindleError
      ? error
      : new RekindleError("BUILD_FAILED", `making Node.js base image ${tag} failed`, { cause: error });
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** node, npm and npx in /usr/local as in the official image, and its user "node" (1000:1000). */
function installRuntime(root: string, runtime: NodeRuntime): void {
  const bin = join(root, "usr", "local", "bin");
  mkdirSync(bin, { recursive: true });
  copyFileSync(runtime.binary, join(bin, "node"));
  chmodSync(join(bin, "node"), 0o755);
  // npm's own node_modules/.bin holds relative symlinks: kept as they are, not re-pointed at the host.
  cpSync(runtime.npmDir, join(root, "usr", "local", "lib", "node_modules", "npm"), {
    recursive: true,
    verbatimSymlinks: true,
  });
  symlinkSync("../lib/node_modules/npm/bin/npm-cli.js", join(bin, "npm"));
  symlinkSync("../lib/node_modules/npm/bin/npx-cli.js", join(bin, "npx"));
  const id = NODE_BASE_UID;
  appendFileSync(join(root, "etc", "passwd"), `node:x:${id}:${id}::/home/node:/bin/bash\n`);
  appendFileSync(join(root, "etc", "group"), `node:x:${id}:\n`);
  const home = join(root, "home", "node");
  mkdirSync(home, { recursive: true });
  chownSync(home, id, id);
}

async function checkRuntime(docker: DockerCli, tag: string, runtime: NodeRuntime): Promise<void> {
  let output: string;
  try {
    output = await docker.run([
      "run",
      "--rm",
      "--network",
      "none",
      "--user",
      `${NODE_BASE_UID}:${NODE_BASE_UID}`,
      tag,
      "sh",
      "-c",
      "node --version && npm --version",
    ]);
  } catch (error) {
    throw new RekindleError(
      "BUILD_FAILED",
      `node ${runtime.version} from ${runtime.binary} does not run in Debian ${NODE_BASE_SUITE} minbase`,
      {
        hint: `\`ldd ${runtime.binary}\` lists the libraries it needs: add their Debian packages to NODE_BASE_PACKAGES (lib/cluster/kind/image/node-base.ts)`,
        cause: error,
      },
    );
  }
  const expected = `${runtime.version}\n${runtime.npmVersion}`;
  if (output !== expected) {
    throw new RekindleError(
      "BUILD_FAILED",
      `the base image's node and npm answer ${JSON.stringify(output)}, not ${JSON.stringify(expected)}`,
    );
  }
}
