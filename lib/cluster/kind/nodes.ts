// kind's node containers through testcontainers' container runtime client (Docker, Podman or
// Colima, wherever testcontainers finds one): found by name and the io.x-k8s.kind.cluster label.
import type { ContainerRuntimeClient } from "testcontainers";
import { getContainerRuntimeClient } from "testcontainers";
import { errorMessage, RekindleError } from "../../errors.js";
import { commandLine } from "../../util/command.js";
import { pollUntil } from "../../util/time.js";
import type { EngineImage } from "../provider.js";
import { killContainer, killFrozenContainer, type EngineContainer } from "./frozen-kill.js";
import { KIND_CLUSTER_LABEL, KIND_ROLE_LABEL } from "./labels.js";

// dockerode's types as testcontainers exposes them (dockerode is its dependency, not ours).
type Container = EngineContainer;
type ContainerState = Awaited<ReturnType<ContainerRuntimeClient["container"]["inspect"]>>["State"];

export type RuntimeClientFactory = () => Promise<ContainerRuntimeClient>;

/** testcontainers' runtime client, or a RekindleError UNREACHABLE (exit 3) saying no container engine answered. */
export async function connectContainerEngine(
  factory: RuntimeClientFactory = getContainerRuntimeClient,
): Promise<ContainerRuntimeClient> {
  try {
    return await factory();
  } catch (error) {
    if (error instanceof RekindleError) throw error;
    throw new RekindleError("UNREACHABLE", "no container engine answers (kind nodes are containers)", {
      hint: "start Docker (dockerd, Docker Desktop) or Podman; testcontainers looks at DOCKER_HOST, ~/.testcontainers.properties and the default sockets",
      cause: error,
    });
  }
}

export interface KindNodeContainer {
  /** Container name = Kubernetes node name (kind names both the same). */
  name: string;
  id: string;
  /** "control-plane", "worker", "external-load-balancer" (kind's role label). */
  role: string;
  /** Docker's state: "running", "paused", "exited", "created"… */
  state: string;
}

/** Asks logind for a power-off, which honours the kubelet's shutdown inhibitor. */
export const POWEROFF_COMMAND = ["systemctl", "poweroff"] as const;

export interface NodeExecResult {
  exitCode: number;
  output: string;
}

/** Sorts node names the way people count: worker, worker2, …, worker10. */
export function sortNodeNames(names: readonly string[]): string[] {
  return [...names].sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
}

export class KindNodes {
  readonly cluster: string;
  readonly #client: RuntimeClientFactory;

  constructor(cluster: string, client: RuntimeClientFactory = getContainerRuntimeClient) {
    this.cluster = cluster;
    this.#client = () => connectContainerEngine(client);
  }

  /** Every container of the cluster, stopped ones too (the runtime client's list() shows running only). */
  async list(): Promise<KindNodeContainer[]> {
    const client = await this.#client();
    const infos = await client.container.dockerode.listContainers({
      all: true,
      filters: { label: [`${KIND_CLUSTER_LABEL}=${this.cluster}`] },
    });
    return infos
      .filter((info) => info.Labels[KIND_CLUSTER_LABEL] === this.cluster)
      .map((info) => ({
        name: (info.Names[0] ?? info.Id).replace(/^\//, ""),
        id: info.Id,
        role: info.Labels[KIND_ROLE_LABEL] ?? "",
        state: info.State,
      }));
  }

  /** The image the cluster's nodes were created from (the control plane's), with its image ID. */
  async nodeImage(): Promise<EngineImage | undefined> {
    const client = await this.#client();
    const infos = await client.container.dockerode.listContainers({
      all: true,
      filters: { label: [`${KIND_CLUSTER_LABEL}=${this.cluster}`, `${KIND_ROLE_LABEL}=control-plane`] },
    });
    const info = infos[0];
    return info && { reference: info.Image, digest: info.ImageID === "" ? null : info.ImageID };
  }

  /** The engine's image ID of `reference`; null when the engine does not have it. */
  async imageId(reference: string): Promise<string | null> {
    const client = await this.#client();
    try {
      return (await client.container.dockerode.getImage(reference).inspect()).Id;
    } catch {
      return null;
    }
  }

  /** Worker node names (role label "worker"), sorted; control plane and load balancer excluded. */
  async workers(): Promise<string[]> {
    return sortNodeNames((await this.list()).filter((n) => n.role === "worker").map((n) => n.name));
  }

  /**
   * Finds node `name` and runs `fn` on its container with its current state; engine errors
   * (a dockerode HTTP error, say) become a COMMAND_FAILED naming the operation and the node.
   */
  async #withContainer<T>(
    name: string,
    what: string,
    fn: (
      container: Container,
      state: ContainerState,
      client: ContainerRuntimeClient,
      id: string,
    ) => Promise<T>,
  ): Promise<T> {
    const client = await this.#client();
    const nodes = await this.list();
    const node = nodes.find((n) => n.name === name);
    if (!node) {
      const known = sortNodeNames(nodes.map((n) => n.name));
      throw new RekindleError("NOT_FOUND", `no node container "${name}" in kind cluster ${this.cluster}`, {
        hint:
          known.length > 0
            ? `nodes of ${this.cluster}: ${known.join(", ")}`
            : `kind cluster ${this.cluster} has no node containers`,
        details: { node: name, cluster: this.cluster },
      });
    }
    try {
      const container = client.container.getById(node.id);
      return await fn(container, (await client.container.inspect(container)).State, client, node.id);
    } catch (error) {
      if (error instanceof RekindleError) throw error;
      throw new RekindleError("COMMAND_FAILED", `${what} node ${name} failed: ${errorMessage(error)}`, {
        details: { node: name, cluster: this.cluster, container: node.id },
        cause: error,
      });
    }
  }

  /** Running and Paused as the engine reports them now. */
  async state(name: string): Promise<{ running: boolean; paused: boolean; status: string }> {
    return this.#withContainer(name, "inspecting", (_c, state) =>
      Promise.resolve({ running: state.Running, paused: state.Paused, status: state.Status }),
    );
  }

  /** SIGKILL to the container's init: the node dies with no warning. No-op when not running. */
  async kill(name: string): Promise<void> {
    await this.#withContainer(name, "killing", async (container, state, _client, id) => {
      if (!state.Running) return;
      // Thawing first would let a partitioned node run (and renew its Lease) before it dies.
      if (state.Paused) await killFrozenContainer(container, id);
      else await container.kill({ signal: "SIGKILL" });
    });
  }

  /** Starts a stopped node container (systemd boots, kubelet comes back). No-op when running. */
  async start(name: string): Promise<void> {
    await this.#withContainer(name, "starting", async (container, state) => {
      if (!state.Running) await container.start();
    });
  }

  /** Freezes every process in the node (cgroup freezer). No-op when already paused. */
  async pause(name: string): Promise<void> {
    await this.#withContainer(name, "pausing", async (container, state) => {
      if (!state.Running) {
        throw new RekindleError(
          "CONFLICT",
          `cannot partition node ${name}: its container is ${state.Status}`,
          {
            hint: "startNode it first; a partition needs a running node",
          },
        );
      }
      if (!state.Paused) await container.pause();
    });
  }

  async unpause(name: string): Promise<void> {
    await this.#withContainer(name, "unpausing", async (container, state) => {
      if (state.Paused) await container.unpause();
    });
  }

  /**
   * An orderly power-off the kubelet sees coming: `systemctl poweroff` in the node has logind
   * announce PrepareForShutdown, the kubelet's shutdown manager ends its pods within its inhibitor
   * delay, then systemd halts and the container exits. (`docker stop` sends systemd SIGRTMIN+3,
   * which halts without asking logind: the kubelet is never told, measured on kind v0.33.0 nodes.)
   * The restart policy is "no" while the node goes down, since systemd leaves the container with
   * exit code 130 and kind's on-failure:1 would boot it again, and is put back once it is down.
   * SIGKILL after `timeoutSeconds` if it has not exited then (`forced`). No-op when not running.
   */
  async shutDown(name: string, timeoutSeconds: number): Promise<{ forced: boolean }> {
    return this.#withContainer(name, "shutting down", async (container, state, client) => {
      if (!state.Running) return { forced: false };
      if (state.Paused) await container.unpause();
      const policy = (await client.container.inspect(container)).HostConfig.RestartPolicy;
      await container.update({ RestartPolicy: { Name: "no" } });
      try {
        const poweroff = await client.container.exec(container, [...POWEROFF_COMMAND]);
        if (poweroff.exitCode !== 0) {
          throw new RekindleError(
            "COMMAND_FAILED",
            `node ${name} cannot power off through systemd-logind: ${POWEROFF_COMMAND.join(" ")} exited ${poweroff.exitCode}: ${poweroff.output.trim().split("\n").at(-1) ?? ""}`,
            {
              hint: "the node image needs systemd with D-Bus and systemd-logind (rekindle's offline image has them: --image rekindle)",
              details: { node: name, cluster: this.cluster },
            },
          );
        }
        const exited = await pollUntil(
          async () => ((await client.container.inspect(container)).State.Running ? undefined : true),
          { what: `node ${name} to power off`, timeoutMs: timeoutSeconds * 1000, intervalMs: 500 },
        ).catch((error: unknown) => {
          if (error instanceof RekindleError && error.code === "TIMEOUT") return false;
          throw error;
        });
        if (!exited) await killContainer(container);
        return { forced: !exited };
      } finally {
        await container.update({ RestartPolicy: policy });
      }
    });
  }

  /** Runs `argv` inside the node container; returns its exit code and combined output. */
  async exec(name: string, argv: readonly string[]): Promise<NodeExecResult> {
    return this.#withContainer(
      name,
      `running ${argv.join(" ").slice(0, 60)} on`,
      async (container, _s, client) => {
        const result = await client.container.exec(container, [...argv]);
        return { exitCode: result.exitCode, output: result.output };
      },
    );
  }

  /** Like exec, but a non-zero exit is a COMMAND_FAILED naming the command and its output. */
  async run(name: string, argv: readonly string[], what: string): Promise<string> {
    const result = await this.exec(name, argv);
    if (result.exitCode !== 0) {
      const tail = result.output.trim().split("\n").slice(-25).join("\n");
      throw new RekindleError(
        "COMMAND_FAILED",
        `${what} on node ${name} failed (exit ${result.exitCode}): ${tail.split("\n").at(-1) ?? ""}`,
        {
          details: {
            command: `docker exec ${name} ${commandLine(argv[0] ?? "", argv.slice(1))}`,
            exitCode: result.exitCode,
            outputTail: tail,
          },
        },
      );
    }
    return result.output;
  }
}
