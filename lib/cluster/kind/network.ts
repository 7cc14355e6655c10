// The address on the host that kind's nodes, and the pods in them, reach: the gateway of the
// docker network the nodes sit on. The host owns that address (it is the network's bridge), so a
// host-side service listening there is reachable from every pod.
import { isIPv4 } from "node:net";
import { getContainerRuntimeClient } from "testcontainers";
import { errorMessage, RekindleError } from "../../errors.js";
import { connectContainerEngine, type RuntimeClientFactory } from "./nodes.js";

/** The network kind puts every cluster's nodes on, unless KIND_EXPERIMENTAL_DOCKER_NETWORK names another. */
export const KIND_NETWORK = "kind";

export interface NetworkGatewayOptions {
  /** Default: $KIND_EXPERIMENTAL_DOCKER_NETWORK (kind's own override), else "kind". */
  network?: string;
  /** Default: testcontainers' runtime client (DOCKER_HOST, Podman, Colima…). */
  client?: RuntimeClientFactory;
}

type IpamConfig = { Subnet?: string | undefined; Gateway?: string | undefined };

/** The first host address of an IPv4 subnet ("172.18.0.0/16" → "172.18.0.1"). */
function firstHost(subnet: string): string | undefined {
  const [address = "", bits = ""] = subnet.split("/");
  const prefix = Number(bits);
  if (!isIPv4(address) || !Number.isInteger(prefix) || prefix < 1 || prefix > 30) return undefined;
  const value = address.split(".").reduce((sum, octet) => sum * 256 + Number(octet), 0);
  const network = value - (value % 2 ** (32 - prefix));
  const first = network + 1;
  return [24, 16, 8, 0].map((shift) => Math.floor(first / 2 ** shift) % 256).join(".");
}

/**
 * The IPv4 gateway in a network's IPAM configuration. Engines write it as "172.18.0.1" or, for
 * some networks, "172.18.0.1/16"; a daemon that created the network on its first boot leaves it
 * out (moby/moby#26799), and then the bridge still holds the subnet's first address, the default
 * gateway, which is what this returns.
 */
export function ipv4Gateway(configs: readonly IpamConfig[]): string | undefined {
  for (const config of configs) {
    const gateway = config.Gateway?.split("/")[0];
    if (gateway !== undefined && isIPv4(gateway)) return gateway;
  }
  for (const config of configs) {
    const derived = config.Subnet === undefined ? undefined : firstHost(config.Subnet);
    if (derived !== undefined) return derived;
  }
  return undefined;
}

/** `docker network inspect <network>` → its IPv4 gateway; NOT_FOUND when there is no such network or no IPv4 subnet. */
export async function kindNetworkGateway(options: NetworkGatewayOptions = {}): Promise<string> {
  const network = options.network ?? process.env["KIND_EXPERIMENTAL_DOCKER_NETWORK"] ?? KIND_NETWORK;
  const client = await connectContainerEngine(options.client ?? getContainerRuntimeClient);
  let info;
  try {
    info = await client.network.getById(network).inspect();
  } catch (error) {
    if ((error as { statusCode?: unknown }).statusCode === 404) {
      throw new RekindleError("NOT_FOUND", `no docker network "${network}" on the container engine`, {
        hint: "kind creates it with the first cluster: create a kind cluster first (or set KIND_EXPERIMENTAL_DOCKER_NETWORK to the network yours uses)",
        details: { network },
        cause: error,
      });
    }
    throw new RekindleError(
      "COMMAND_FAILED",
      `inspecting docker network "${network}" failed: ${errorMessage(error)}`,
      {
        details: { network },
        cause: error,
      },
    );
  }
  const gateway = ipv4Gateway(info.IPAM?.Config ?? []);
  if (gateway === undefined) {
    throw new RekindleError(
      "NOT_FOUND",
      `docker network "${network}" has no IPv4 subnet, so no IPv4 gateway`,
      {
        details: { network, ipam: info.IPAM?.Config ?? [] },
      },
    );
  }
  return gateway;
}
