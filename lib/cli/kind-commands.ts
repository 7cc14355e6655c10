// `rekindle kind …`: the offline node image and the container engine kind runs on.
import { parseOptions } from "../util/parse-options.js";
import { ensureKindEngine } from "../cluster/kind/engine.js";
import { cachedNodeImage, ensureNodeImage } from "../cluster/kind/image/build.js";
import {
  cachedControllerImage,
  ensureControllerImage,
  planControllerImage,
} from "../cluster/kind/image/controller-image.js";
import { NODE_IMAGE_VERSIONS, nodeImageTag } from "../cluster/kind/image/recipe.js";
import { consoleProgress } from "../util/progress.js";

export const KIND_BUILD_IMAGE_USAGE = `rekindle kind build-image [--check] [--force]
      build rekindle's offline kind node image (Kubernetes ${NODE_IMAGE_VERSIONS.kubernetes}) from Debian
      packages and Go modules; cached, never rebuilt unless --force; --check only reports whether
      the engine has it. Needs root. Where privileged containers fail, it goes into rekindle's
      private engine (scripts/kind-engine.sh), the one rekindle runs kind on.`;
export const KIND_BUILD_CONTROLLER_IMAGE_USAGE = `rekindle kind build-controller-image [--check] [--force]
      build the in-cluster controller image (rekindle:<version>) from the Dockerfile in that
      engine, pulling nothing: its base is made from Debian packages and this machine's Node.js
      (root, once), npm installs offline from a cache this machine's npm fills; rebuilt only when
      its sources change, or with --force; --check only reports whether the engine has it up to date.`;

export const KIND_USAGE = `rekindle kind <command>: rekindle's offline kind node image and controller image

${KIND_BUILD_IMAGE_USAGE}
${KIND_BUILD_CONTROLLER_IMAGE_USAGE}`;

/**
 * Parses `[--check] [--force]` and runs `build` with the engine kind uses (the user's, or a private
 * one started for this command only: its data root, and so the image, stays in the cache; `kind
 * load docker-image` takes images from there).
 */
async function withImageEngine(
  args: string[],
  signal: AbortSignal,
  build: (
    flags: { check: boolean; force: boolean },
    progress: ReturnType<typeof consoleProgress>,
  ) => Promise<number>,
): Promise<number> {
  const { values } = parseOptions({
    args,
    options: { check: { type: "boolean", default: false }, force: { type: "boolean", default: false } },
    strict: true,
  });
  const progress = consoleProgress();
  const engine = await ensureKindEngine(progress, signal);
  try {
    return await build({ check: values.check, force: values.force }, progress);
  } finally {
    await engine.stop();
  }
}

export function buildImage(args: string[], signal: AbortSignal): Promise<number> {
  return withImageEngine(args, signal, async ({ check, force }, progress) => {
    if (check) {
      const cached = await cachedNodeImage();
      process.stdout.write(cached ? `${cached.tag} ${cached.id}\n` : `${nodeImageTag()} not built\n`);
      return cached ? 0 : 1;
    }
    const image = await ensureNodeImage({ force, progress, signal });
    process.stdout.write(`${image.tag}\n`);
    return 0;
  });
}

export function buildControllerImage(args: string[], signal: AbortSignal): Promise<number> {
  return withImageEngine(args, signal, async ({ check, force }, progress) => {
    if (check) {
      const cached = await cachedControllerImage({ signal });
      if (cached) {
        process.stdout.write(`${cached.tag} ${cached.id}\n`);
        return 0;
      }
      const { tag } = await planControllerImage({ signal });
      process.stdout.write(`${tag} not built from the current sources\n`);
      return 1;
    }
    const image = await ensureControllerImage({ force, progress, signal });
    process.stdout.write(`${image.tag}\n`);
    return 0;
  });
}
