// Which node image a new kind cluster boots: kind's own kindest/node where it can be had (the
// default), else rekindle's offline image, built from Debian packages and Go modules.
import { RekindleError } from "../../errors.js";
import type { Progress } from "../../util/progress.js";
import { KIND_DEFAULT_NODE_IMAGE } from "./cli.js";
import { DockerCli } from "./image/docker-cli.js";
import { ensureNodeImage } from "./image/build.js";

export const NODE_IMAGE_CHOICES = ["auto", "kindest", "rekindle"] as const;

/** --image default: $REKINDLE_KIND_IMAGE, else "auto". */
export function defaultNodeImageChoice(env: NodeJS.ProcessEnv = process.env): string {
  const value = env["REKINDLE_KIND_IMAGE"];
  return value !== undefined && value !== "" ? value : "auto";
}

/** Throws INVALID_INPUT unless `choice` is one of NODE_IMAGE_CHOICES or an image reference. */
export function checkNodeImageChoice(choice: string): void {
  if ((NODE_IMAGE_CHOICES as readonly string[]).includes(choice) || /[:/]/.test(choice)) return;
  throw RekindleError.invalidInput("--image", choice, [...NODE_IMAGE_CHOICES, "<image reference>"]);
}

/**
 * The image reference to hand kind (undefined: kind's default). "kindest": kind's default;
 * "rekindle": the offline image (built when the engine lacks it); "auto": kind's default when the
 * engine has it or can pull it, else the offline image; anything with a ':' or '/': that image.
 */
export async function resolveNodeImage(
  choice: string,
  options: { progress: Progress; signal?: AbortSignal },
): Promise<string | undefined> {
  const { progress, signal } = options;
  switch (choice) {
    case "kindest":
      return undefined;
    case "rekindle":
      return (await ensureNodeImage({ progress, ...(signal ? { signal } : {}) })).tag;
    case "auto": {
      const docker = new DockerCli(signal ? { signal } : {});
      if ((await docker.imageId(KIND_DEFAULT_NODE_IMAGE)) !== undefined) return undefined;
      try {
        await docker.run(["pull", "--quiet", KIND_DEFAULT_NODE_IMAGE]);
        return undefined;
      } catch (error) {
        const reason = error instanceof RekindleError ? error.message.split("\n")[0] : String(error);
        progress.info(
          `cannot pull ${KIND_DEFAULT_NODE_IMAGE} (${reason}); using rekindle's offline node image (--image rekindle)`,
        );
        return (await ensureNodeImage({ progress, ...(signal ? { signal } : {}) })).tag;
      }
    }
    default:
      checkNodeImageChoice(choice);
      return choice;
  }
}
