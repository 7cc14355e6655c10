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
import { OUTPUT_OPTION, OUTPUT_USAGE, outputFormat, writeJson, type OutputFormat } from "./args.js";

export const KIND_BUILD_IMAGE_USAGE = `rekindle kind build-image [--check] [--force] ${OUTPUT_USAGE}
      build rekindle's offline kind node image (Kubernetes ${NODE_IMAGE_VERSIONS.kubernetes}) from Debian
      packages and Go modules; cached, never rebuilt unless --force; --check only reports whether
      the engine has it. Needs root. Where privileged containers fail, it goes into rekindle's
      private engine (scripts/kind-engine.sh), the one rekindle runs kind on; prints its tag
      (-o json: {tag, id, built}; --check: {tag, id: null when the engine lacks it})`;
export const KIND_BUILD_CONTROLLER_IMAGE_USAGE = `rekindle kind build-controller-image [--check] [--force] ${OUTPUT_USAGE}
      build the in-cluster controller image (rekindle:<version>) from the Dockerfile in that
      engine, pulling nothing: its base is made from Debian packages and this machine's Node.js
      (root, once), npm installs offline from a cache this machine's npm fills; rebuilt only when
      its sources change, or with --force; --check only reports whether the engine has it up to date
      (-o json as build-image's)`;

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
    flags: { check: boolean; force: boolean; format: OutputFormat },
    progress: ReturnType<typeof consoleProgress>,
  ) => Promise<number>,
): Promise<number> {
  const { values } = parseOptions({
    args,
    options: {
      check: { type: "boolean", default: false },
      force: { type: "boolean", default: false },
      ...OUTPUT_OPTION,
    },
    strict: true,
  });
  const format = outputFormat(values.output);
  const progress = consoleProgress();
  const engine = await ensureKindEngine(progress, signal);
  try {
    return await build({ check: values.check, force: values.force, format }, progress);
  } finally {
    await engine.stop();
  }
}

export function buildImage(args: string[], signal: AbortSignal): Promise<number> {
  return withImageEngine(args, signal, async ({ check, force, format }, progress) => {
    if (check) {
      const cached = await cachedNodeImage();
      if (format === "json") writeJson({ tag: cached?.tag ?? nodeImageTag(), id: cached?.id ?? null });
      else process.stdout.write(cached ? `${cached.tag} ${cached.id}\n` : `${nodeImageTag()} not built\n`);
      return cached ? 0 : 1;
    }
    const image = await ensureNodeImage({ force, progress, signal });
    printImage(image, format);
    return 0;
  });
}

export function buildControllerImage(args: string[], signal: AbortSignal): Promise<number> {
  return withImageEngine(args, signal, async ({ check, force, format }, progress) => {
    if (check) {
      const cached = await cachedControllerImage({ signal });
      const tag = cached?.tag ?? (await planControllerImage({ signal })).tag;
      if (format === "json") writeJson({ tag, id: cached?.id ?? null });
      else
        process.stdout.write(
          cached ? `${cached.tag} ${cached.id}\n` : `${tag} not built from the current sources\n`,
        );
      return cached ? 0 : 1;
    }
    const image = await ensureControllerImage({ force, progress, signal });
    printImage(image, format);
    return 0;
  });
}

/** A built (or found) image: its tag, or {tag, id, built} under -o json. */
function printImage(image: { tag: string; id: string; built: boolean }, format: OutputFormat): void {
  if (format === "json") writeJson({ tag: image.tag, id: image.id, built: image.built });
  else process.stdout.write(`${image.tag}\n`);
}
