// Fences a kind node: stops its container (`docker stop -t 0`; a paused one is killed without being
// thawed first, see frozen-kill.ts) through testcontainers' container runtime client, which finds
// Docker, Podman or Colima; confirmed when the container is not running.
// Options: cluster (kind cluster name, matched on the io.x-k8s.kind.cluster label; default any),
// container (default: the node name, which is the kind container's name).
// testcontainers is loaded on first use, not with this module: `rekindle controller` registers this
// driver, and the controller image (which reaches no container engine) does not carry testcontainers.
// Where it is not installed, a template naming this driver is refused at start.
// Power losses are heard from the engine's container `die` events (watchPowerLoss).
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { ContainerRuntimeClient } from "testcontainers";
import { RekindleError } from "../../errors.js";
import type {
  FenceDriver,
  FenceDriverSpec,
  FenceTarget,
  PowerLossNotice,
  PowerState,
  PowerWatchOptions,
} from "../../controller/drivers/types.js";
import { isObject } from "../../util/is-object.js";
import { keepWatching } from "../../util/keep-watching.js";
import { killFrozenContainer } from "./frozen-kill.js";
import { KIND_CLUSTER_LABEL } from "./labels.js";

/** testcontainers' runtime client, loaded when first asked for. */
async function loadRuntimeClient(): Promise<ContainerRuntimeClient> {
  const { getContainerRuntimeClient } = await import("testcontainers");
  return getContainerRuntimeClient();
}

/** Whether the testcontainers package can be loaded here. */
export function testcontainersInstalled(): boolean {
  try {
    import.meta.resolve("testcontainers");
    return true;
  } catch {
    return false;
  }
}

function dockerDriverSpec(installed: boolean): FenceDriverSpec {
  return {
    options: {
      cluster: { valid: "a kind cluster name (its io.x-k8s.kind.cluster label)" },
      container: { valid: "a container name (default: the node name)" },
    },
    checkTarget: () =>
      installed
        ? []
        : [
            "the docker driver needs the testcontainers package, which this installation lacks (the controller image carries none); in a pod, fence kind nodes with the webhook driver",
          ],
  };
}

export class DockerFenceDriver implements FenceDriver {
  readonly name = "docker";
  readonly spec: FenceDriverSpec;
  readonly #client: () => Promise<ContainerRuntimeClient>;

  /**
   * `client`: the engine's client (default: testcontainers' runtime client, loaded on first use).
   * `installed`: whether testcontainers is there to load (default: looked up); when false, every
   * target is refused at start.
   */
  constructor(
    client: () => Promise<ContainerRuntimeClient> = loadRuntimeClient,
    installed: boolean = testcontainersInstalled(),
  ) {
    this.#client = client;
    this.spec = dockerDriverSpec(installed);
  }

  async #container(target: FenceTarget) {
    const client = await this.#client();
    const name = target.options["container"] ?? target.node;
    const cluster = target.options["cluster"];
    // Stopped containers too (the runtime client's list() shows running ones only).
    const match = (await client.container.dockerode.listContainers({ all: true })).find(
      (info) =>
        info.Names.includes(`/${name}`) &&
        (cluster === undefined || info.Labels[KIND_CLUSTER_LABEL] === cluster),
    );
    if (!match) {
      throw new RekindleError(
        "NOT_FOUND",
        `no container "${name}"${cluster ? ` in kind cluster ${cluster}` : ""} for node ${target.node}`,
      );
    }
    return { client, container: client.container.getById(match.Id), id: match.Id };
  }

  async powerOff(target: FenceTarget): Promise<void> {
    const { client, container, id } = await this.#container(target);
    const state = await client.container.inspect(container);
    if (!state.State.Running) return;
    // A partitioned (paused) node must not run again on its way down: see frozen-kill.ts.
    if (state.State.Paused) await killFrozenContainer(container, id);
    else await client.container.stop(container, { timeout: 0 });
  }

  async powerOn(target: FenceTarget): Promise<void> {
    const { client, container } = await this.#container(target);
    const state = await client.container.inspect(container);
    if (!state.State.Running) await client.container.start(container);
  }

  async powerState(target: FenceTarget): Promise<PowerState> {
    const { client, container } = await this.#container(target);
    return (await client.container.inspect(container)).State.Running ? "on" : "off";
  }

  /** Each container `die` event (a stop, a kill, a crash) is a notice about the targets it names. */
  watchPowerLoss(onPowerLoss: PowerLossNotice, options: PowerWatchOptions): void {
    void keepWatching(
      "the container engine's events",
      async (connected, signal) => {
        const client = await this.#client();
        const stream = (await client.container.dockerode.getEvents({
          filters: { type: ["container"], event: ["die"] },
        })) as Readable;
        const close = () => stream.destroy();
        signal.addEventListener("abort", close, { once: true });
        try {
          connected();
          for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
            const died = diedContainer(line);
            if (died) onPowerLoss((target) => namesContainer(target, died));
          }
        } finally {
          signal.removeEventListener("abort", close);
          close();
        }
      },
      options,
    );
  }
}

/** The container a `die` event line is about: its name and kind cluster label, if the line is one. */
export function diedContainer(line: string): { name: string; cluster: string | undefined } | undefined {
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isObject(event) || event["Action"] !== "die" || !isObject(event["Actor"])) return undefined;
  const attributes = event["Actor"]["Attributes"];
  if (!isObject(attributes) || typeof attributes["name"] !== "string") return undefined;
  const cluster = attributes[KIND_CLUSTER_LABEL];
  return { name: attributes["name"], cluster: typeof cluster === "string" ? cluster : undefined };
}

/**
 * Whether `target` is the container that died: its container name (default the node's), and its
 * cluster when both name one (an engine that leaves labels out of its events matches on the name:
 * the notice only asks for a read, which finds the right container).
 */
export function namesContainer(
  target: Pick<FenceTarget, "node" | "options">,
  died: { name: string; cluster: string | undefined },
): boolean {
  const cluster = target.options["cluster"];
  if (cluster !== undefined && died.cluster !== undefined && cluster !== died.cluster) return false;
  return (target.options["container"] ?? target.node) === died.name;
}
