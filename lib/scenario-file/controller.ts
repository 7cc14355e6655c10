// The recovery controller as a scenario file asks for it: the profile's settings with the file's
// over them, and, when the file gives a fence config, its templates with the generic drivers and
// the provider's own (as `rekindle controller --fence-config` loads them).
import { fenceDriverRegistry, genericFenceDrivers } from "../controller/drivers/registry.js";
import { loadFenceConfig } from "../controller/fence-config-parse.js";
import type { NodeCapability } from "../cluster/provider.js";
import type { ScenarioContext } from "../scenario/harness.js";
import type { ControllerOverrides } from "../scenario/harness-types.js";
import type { ControllerSpec } from "./types.js";

export function fileControllerOverrides<R extends NodeCapability>(
  context: ScenarioContext<R>,
  spec: ControllerSpec,
): ControllerOverrides {
  const config = { ...spec.settings };
  if (spec.fenceConfig === undefined) return { config };
  const own = context.cluster.capabilities.fencing?.fenceDriver();
  const drivers = fenceDriverRegistry([...genericFenceDrivers(context.kc), ...(own ? [own] : [])]);
  return { config, drivers, fenceConfig: loadFenceConfig(spec.fenceConfig, drivers) };
}
