// The fence drivers a controller can use, by name. The controller itself knows only the generic
// drivers (manual, webhook, redfish, fence-agent); a provider's own driver (sim, docker for kind)
// lives beside its provider in lib/cluster and is registered by a layer above the controller (the
// CLI, a scenario, a test), so the controller's import graph never reaches a cluster provider.
import { RekindleError } from "../../errors.js";
import type { k8s } from "../../kube/client.js";
import { resolveFenceTarget, type FenceConfig } from "../fence-config.js";
import { FenceAgentDriver } from "./fence-agent.js";
import { ManualFenceDriver } from "./manual.js";
import { RedfishFenceDriver } from "./redfish.js";
import type { FenceDriver, FenceTarget } from "./types.js";
import { WebhookFenceDriver } from "./webhook.js";

export type FenceDriverRegistry = ReadonlyMap<string, FenceDriver>;

/** The drivers that work with any cluster: manual, webhook, redfish, fence-agent. */
export function genericFenceDrivers(kc: k8s.KubeConfig): FenceDriver[] {
  return [
    new ManualFenceDriver(kc),
    new WebhookFenceDriver(),
    new RedfishFenceDriver(),
    new FenceAgentDriver(),
  ];
}

/** The registry of `drivers` by name, in the order given; two drivers with one name are a mistake. */
export function fenceDriverRegistry(drivers: Iterable<FenceDriver>): FenceDriverRegistry {
  const registry = new Map<string, FenceDriver>();
  for (const driver of drivers) {
    if (registry.has(driver.name)) {
      throw new RekindleError("INVALID_INPUT", `two fence drivers are named "${driver.name}"`);
    }
    registry.set(driver.name, driver);
  }
  return registry;
}

/**
 * The driver the node's fence template names, from `registry`, with the node's target.
 */
export async function fenceDriverFor(
  registry: FenceDriverRegistry,
  kc: k8s.KubeConfig,
  fenceConfig: FenceConfig,
  node: string,
  secretNamespace: string,
): Promise<{ driver: FenceDriver; target: FenceTarget }> {
  const { driver: name, target } = await resolveFenceTarget(kc, fenceConfig, node, secretNamespace);
  const driver = registry.get(name);
  if (!driver) {
    throw new RekindleError(
      "NOT_FOUND",
      `fence driver "${name}" is not available; available: ${[...registry.keys()].join(", ")}`,
    );
  }
  return { driver, target };
}
