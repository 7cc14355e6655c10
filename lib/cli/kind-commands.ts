// `rekindle kind …`: the offline node image and the container engine kind runs on.
import { parseArgs } from "node:util";
import { RekindleError } from "../errors.js";
import { ensureKindEngine } from "../cluster/kind/engine.js";
import { cachedNodeImage, ensureNodeImage } from "../cluster/kind/image/build.js";
import {
  cachedControllerImage,
  ensureControllerImage,
  planControllerImage,
} from "../cluster/kind/image/controller-image.js";
import { NODE_IMAGE_VERSIONS, nodeImageTag } from "../cluster/kind/image/recipe.js";
import { consoleProgress } from "../util/progress.js";

export const KIND_USAGE = `rekindle kind <command>

  build-image [--check] [--force] build rekindle's offline kind node image (Kubernetes ${NODE_IMAGE_VERSIONS.kubernetes})
                                  from Debian packages and Go modules; cached, never rebuilt unless
                                  --force; --check only reports whether the engine has it. Needs root.
                                  Where privileged containers fail, it goes into rekindle's private
                                  engine (scripts/kind-engine.sh), the one rekindle runs kind on.
  build-controller-image [--check] [--force]
                                  build the in-cluster controller image (rekindle:<version>) from the
                                  Dockerfile in that engine, pulling nothing: its base is made from
                                  Debian packages and this machine's Node.js (root, once), npm
                                  installs offline from a cache this machine's npm fills; rebuilt
                                  only when its sources change, or with --force; --check only
                                  reports whether the engine has it up to date.`;

export async function kindCommand(args: string[], signal: AbortSignal): Promise<number> {
  const [command, ...rest] = args;
  switch (command) {
    case "build-image":
      return buildImage(rest, signal);
    case "build-controller-image":
      return buildControllerImage(rest, signal);
    case undefined:
    case "help":
    case "--help":
      process.stdout.write(`${KIND_USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      throw RekindleError.invalidInput("kind command", command, ["build-image", "build-controller-image"]);
  }
}

async function buildImage(args: string[], signal: AbortSignal): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { check: { type: "boolean", default: false }, force: { type: "boolean", default: false } },
    strict: true,
  });
  const progress = consoleProgress();
  // The image goes into the engine kind will use; a private engine started for it stays up only
  // while this command runs (its data root, and so the image, is kept in the cache).
  const engine = await ensureKindEngine(progress, signal);
  try {
    if (values.check) {
      const cached = await cachedNodeImage();
      process.stdout.write(cached ? `${cached.tag} ${cached.id}\n` : `${nodeImageTag()} not built\n`);
      return cached ? 0 : 1;
    }
    const image = await ensureNodeImage({ force: values.force, progress, signal });
    process.stdout.write(`${image.tag}\n`);
    return 0;
  } finally {
    await engine.stop();
  }
}

async function buildControllerImage(args: string[], signal: AbortSignal): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { check: { type: "boolean", default: false }, force: { type: "boolean", default: false } },
    strict: true,
  });
  const progress = consoleProgress();
  // Into the engine kind runs on, as build-image: `kind load docker-image` takes it from there.
  const engine = await ensureKindEngine(progress, signal);
  try {
    if (values.check) {
      const cached = await cachedControllerImage({ signal });
      if (cached) {
        process.stdout.write(`${cached.tag} ${cached.id}\n`);
        return 0;
      }
      const { tag } = await planControllerImage({ signal });
      process.stdout.write(`${tag} not built from the current sources\n`);
      return 1;
    }
    const image = await ensureControllerImage({ force: values.force, progress, signal });
    process.stdout.write(`${image.tag}\n`);
    return 0;
  } finally {
    await engine.stop();
  }
}
