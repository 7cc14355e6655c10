// The kind CLI, through execa: the exact argv of every command the provider issues (kindArgs, so
// tests can assert them) and a small wrapper that turns kind's failures into RekindleErrors.
import { PINNED_KIND_VERSION } from "../../build/kind-binary.js";
import { RekindleError } from "../../errors.js";
import { commandLine, runCommand } from "../../util/command.js";

// The pinned version lives with the build of the kind CLI (lib/build/); the provider re-exports it.
export { PINNED_KIND_VERSION };

/** The node image the pinned kind creates clusters with when given none (its defaults/image.go). */
export const KIND_DEFAULT_NODE_IMAGE = "kindest/node:v1.37.0";

/** How long `kind create cluster` waits for the control plane to be Ready (its --wait). */
export const DEFAULT_KIND_WAIT = "5m";

/** Argv (without the binary) of each kind command the provider runs. */
export const kindArgs = {
  version: (): string[] => ["version"],
  getClusters: (): string[] => ["get", "clusters"],
  getNodes: (name: string): string[] => ["get", "nodes", "--name", name],
  getKubeconfig: (name: string): string[] => ["get", "kubeconfig", "--name", name],
  /** Copies an image from the engine into every node's containerd (docker save | ctr import). */
  loadDockerImage: (name: string, image: string): string[] => ["load", "docker-image", image, "--name", name],
  createCluster: (
    name: string,
    configPath: string,
    kubeconfigPath: string,
    wait = DEFAULT_KIND_WAIT,
    image?: string,
  ): string[] => [
    "create",
    "cluster",
    "--name",
    name,
    "--config",
    configPath,
    "--kubeconfig",
    kubeconfigPath,
    "--wait",
    wait,
    ...(image !== undefined ? ["--image", image] : []),
  ],
  // --kubeconfig: remove the context from the file create wrote, never from ~/.kube/config.
  deleteCluster: (name: string, kubeconfigPath: string): string[] => [
    "delete",
    "cluster",
    "--name",
    name,
    "--kubeconfig",
    kubeconfigPath,
  ],
} as const;

/** The kind binary: $REKINDLE_KIND, else "kind" on PATH. */
export function defaultKindBinary(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env["REKINDLE_KIND"];
  return explicit !== undefined && explicit !== "" ? explicit : "kind";
}

function isMissingBinary(error: unknown): boolean {
  for (let e: unknown = error; typeof e === "object" && e !== null; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (code === "ENOENT" || code === "EACCES") return true;
  }
  return false;
}

/** kind prints "ERROR: failed to create cluster: …" last; that line says what went wrong. */
export function kindErrorSummary(output: string): string {
  const lines = output
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const errorLine = lines.findLast((l) => l.startsWith("ERROR:"));
  return (errorLine ?? lines.at(-1) ?? "no output").replace(/^ERROR:\s*/, "");
}

export interface KindCliOptions {
  /** Path or name of the kind binary. Default: $REKINDLE_KIND, else "kind" on PATH. */
  binary?: string;
}

export interface KindRunOptions {
  signal?: AbortSignal;
  /** Each line kind prints (its progress while creating a cluster). */
  onLine?: (line: string) => void;
  timeoutMs?: number;
}

export class KindCli {
  readonly binary: string;

  constructor(options: KindCliOptions = {}) {
    this.binary = options.binary ?? defaultKindBinary();
  }

  /** The pasteable command line for `args`. */
  commandLine(args: readonly string[]): string {
    return commandLine(this.binary, args);
  }

  async run(args: readonly string[], options: KindRunOptions = {}): Promise<string> {
    try {
      const result = await runCommand(this.binary, args, {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onLine ? { onLine: options.onLine } : {}),
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      });
      return result.stdout;
    } catch (error) {
      if (!(error instanceof RekindleError)) throw error;
      if (isMissingBinary(error)) {
        throw new RekindleError("TOOLCHAIN", `the kind binary "${this.binary}" cannot be run`, {
          hint: `install kind (go install sigs.k8s.io/kind@${PINNED_KIND_VERSION}) or set REKINDLE_KIND=/path/to/kind`,
          details: { command: this.commandLine(args) },
          cause: error,
        });
      }
      if (error.code === "ABORTED") throw error;
      const tail = typeof error.details["outputTail"] === "string" ? error.details["outputTail"] : "";
      throw new RekindleError(
        "COMMAND_FAILED",
        `kind ${args.slice(0, 2).join(" ")} failed: ${kindErrorSummary(tail)}`,
        {
          hint: "kind's output is below; `docker info` must work for kind to reach the container engine",
          details: { ...error.details },
          cause: error,
        },
      );
    }
  }

  /** `kind version`, e.g. "kind v0.33.0 go1.26.8 linux/amd64". */
  async version(signal?: AbortSignal): Promise<string> {
    return (
      await this.run(kindArgs.version(), signal ? { signal, timeoutMs: 30_000 } : { timeoutMs: 30_000 })
    ).trim();
  }

  /** Cluster names from `kind get clusters` (kind reads them off the node containers' labels). */
  async clusters(signal?: AbortSignal): Promise<string[]> {
    return lines(await this.run(kindArgs.getClusters(), signal ? { signal } : {}));
  }

  /** Node (container) names of cluster `name`, from `kind get nodes`. */
  async nodes(name: string, signal?: AbortSignal): Promise<string[]> {
    return lines(await this.run(kindArgs.getNodes(name), signal ? { signal } : {}));
  }

  /** Loads `image` from the engine into every node of cluster `name` (nothing is pulled). */
  async loadImage(name: string, image: string, signal?: AbortSignal): Promise<void> {
    await this.run(kindArgs.loadDockerImage(name, image), {
      timeoutMs: 600_000,
      ...(signal ? { signal } : {}),
    });
  }

  /** The external kubeconfig of cluster `name` (server on a host port). */
  async kubeconfig(name: string, signal?: AbortSignal): Promise<string> {
    return this.run(kindArgs.getKubeconfig(name), signal ? { signal } : {});
  }
}

/** Non-empty output lines; kind writes "No kind clusters found." to stderr, so stdout is empty then. */
function lines(stdout: string): string[] {
  return stdout
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
}
