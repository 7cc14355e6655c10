// `rekindle kind …`: the offline node image and the container engine kind runs on.
import { parseArgs } from "node:util";
import { RekindleError } from "../errors.js";
import { ensureKindEngine } from "../cluster/kind/engine.js";
import { cachedNodeImage, ensureNodeImage } from "../cluster/kind/image/build.js";
import { NODE_IMAGE_VERSIONS, nodeImageTag } from "../cluster/kind/image/recipe.js";
import { consoleProgress } from "../util/progress.js";

export const KIND_USAGE = `rekindle kind <command>

  build-image [--check] [--force] build rekindle's offline kind node image (Kubernetes ${NODE_IMAGE_VERSIONS.kubernetes})
                                  from Debian packages and Go modules; cached, never rebuilt unless
                                  --force; --check only reports whether the engine has it. Needs root.
                                  Where privileged containers fail, it goes into rekindle's private
                                  engine (scripts/kind-engine.sh), the one rekindle runs kind on.`;

export async function kindCommand(args: string[], signal: AbortSignal): Promise<number> {
  const [command, ...rest] = args;
  switch (command) {
    case "build-image":
      return buildImage(rest, signal);
    case undefined:
    case "help":
    case "--help":
      process.stdout.write(`${KIND_USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      throw RekindleError.invalidInput("kind command", command, ["build-image"]);
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
