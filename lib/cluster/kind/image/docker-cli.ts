// The few container engine commands the image build needs, through the docker CLI (DOCKER_HOST
// picks the engine, as for kind itself).
import { runCommand, type RunCommandOptions } from "../../../util/command.js";

export interface DockerCliOptions {
  /** Default "docker". */
  binary?: string;
  signal?: AbortSignal;
}

export class DockerCli {
  readonly binary: string;
  private readonly signal: AbortSignal | undefined;

  constructor(options: DockerCliOptions = {}) {
    this.binary = options.binary ?? "docker";
    this.signal = options.signal;
  }

  async run(args: readonly string[], input?: string): Promise<string> {
    const result = await runCommand(this.binary, args, {
      ...this.commandOptions(),
      ...(input !== undefined ? { input } : {}),
    });
    return result.stdout.trim();
  }

  /** Like run(), each line of output passed to `onLine` as it comes (builds, for progress). */
  async stream(args: readonly string[], onLine: (line: string) => void): Promise<void> {
    await runCommand(this.binary, args, { ...this.commandOptions(), onLine });
  }

  private commandOptions(): RunCommandOptions {
    return {
      ...(this.signal ? { signal: this.signal } : {}),
      // The legacy builder: it needs no buildx plugin, and a STOPSIGNAL-only build pulls nothing.
      env: { ...process.env, DOCKER_BUILDKIT: "0" },
    };
  }

  /** The image's ID, or undefined when the engine has no such image. */
  async imageId(ref: string): Promise<string | undefined> {
    try {
      return await this.run(["image", "inspect", "--format", "{{.Id}}", ref]);
    } catch {
      return undefined;
    }
  }

  /** The value of one of the image's labels: undefined when the image or the label is missing. */
  async imageLabel(ref: string, label: string): Promise<string | undefined> {
    try {
      const value = await this.run(["image", "inspect", "--format", "{{json .Config.Labels}}", ref]);
      const labels = JSON.parse(value) as Record<string, string> | null;
      return labels?.[label];
    } catch {
      return undefined;
    }
  }

  /** `tar -C dir -c . | docker import [--change …] - ref`. */
  async importDirectory(dir: string, ref: string, changes: readonly string[] = []): Promise<void> {
    const changeArgs = changes.map((c) => `--change ${shellWord(c)}`).join(" ");
    await runCommand(
      "bash",
      [
        "-c",
        `set -o pipefail; tar -C "$1" -c . | ${shellWord(this.binary)} import ${changeArgs} - "$2" >/dev/null`,
        "bash",
        dir,
        ref,
      ],
      this.signal ? { signal: this.signal } : {},
    );
  }

  async importTar(tar: string, ref: string): Promise<void> {
    await this.run(["import", tar, ref]);
  }

  /** A new image from `base` with files copied in (`docker create` + `cp` + `commit`: one layer more). */
  async commitWithFiles(
    base: string,
    ref: string,
    files: readonly { from: string; to: string }[],
    changes: readonly string[] = [],
  ): Promise<void> {
    const container = await this.run(["create", base, "/bin/true"]);
    try {
      for (const file of files) await this.run(["cp", file.from, `${container}:${file.to}`]);
      await this.run(["commit", ...changes.flatMap((c) => ["--change", c]), container, ref]);
    } finally {
      await this.run(["rm", "-f", container]).catch(() => undefined);
    }
  }

  async removeImages(refs: readonly string[]): Promise<void> {
    await this.run(["rmi", ...refs]).catch(() => undefined);
  }
}

function shellWord(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}
