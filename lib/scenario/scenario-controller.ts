// A scenario's in-process recovery controller: started with the provider's fence driver (or the
// scenario's own), given time to see every node renew, stopped and its fences finished and deleted
// by the undo.
import type { NodeCapability } from "../cluster/provider.js";
import { leaseRenewIntervalMs } from "../cluster/profiles.js";
import type { ControllerConfig } from "../controller/config.js";
import { RecoveryController } from "../controller/controller.js";
import { RekindleError } from "../errors.js";
import { pollUntil, sleep } from "../util/time.js";
import { deleteFinishedFences } from "./fences.js";
import type { ControllerOverrides } from "./harness-types.js";
import type { ScenarioContextParts } from "./scenario-context-parts.js";

/** Refuses a controller the scenario did not declare, or one with no fence driver to use. */
function checkCanStart<R extends NodeCapability>(
  parts: ScenarioContextParts<R>,
  overrides: ControllerOverrides,
): void {
  const { definition, given } = parts;
  if (definition.usesController !== true) {
    throw new RekindleError(
      "SCENARIO_DEFINITION",
      `${definition.id} starts the controller without declaring usesController`,
      {
        hint: "set usesController: true in its ScenarioDefinition",
      },
    );
  }
  if (!overrides.drivers && !given.capabilities.fencing) {
    throw new RekindleError(
      "UNSUPPORTED",
      `${definition.id} starts the controller on a cluster with no fence driver`,
      {
        hint: `${given.unsupported.fencing ?? "the provider offers none"}; pass drivers to fence with another`,
      },
    );
  }
}

/**
 * As in production, where the controller runs long before a fault: it has seen every node renew
 * (or judged it lost), so it detects a loss from the last renewal, not from its start. A fixed
 * wait of one renewal interval first, not "until the last node renewed": that would put every
 * fault right after a renewal, the slowest case, and bias the timings.
 */
async function letItSeeEveryNode<R extends NodeCapability>(
  parts: ScenarioContextParts<R>,
  controller: RecoveryController,
  config: ControllerConfig,
): Promise<void> {
  const { signal } = parts;
  await sleep(leaseRenewIntervalMs(parts.cluster.profile) + 2 * config.checkIntervalMs, signal);
  await pollUntil(
    async () => Promise.resolve(controller.unobservedNodes()?.length === 0 ? true : undefined),
    {
      what: "the recovery controller to have seen every node renew",
      timeoutMs: config.unhealthyAfterMs + 30_000,
      intervalMs: 100,
      ...(signal ? { signal } : {}),
    },
  );
}

/** Starts the bundled controller in-process (stopped and its fences released by the undo). */
export async function startScenarioController<R extends NodeCapability>(
  parts: ScenarioContextParts<R>,
  overrides: ControllerOverrides,
): Promise<RecoveryController> {
  checkCanStart(parts, overrides);
  const { kc, steps, progress, inputs, controllerTail } = parts;
  const fencing = parts.given.capabilities.fencing;
  const driver = overrides.drivers ? undefined : fencing?.fenceDriver();
  const nodeSelector = fencing?.nodeSelector;
  const config = {
    ...inputs.controller,
    ...(nodeSelector !== undefined ? { nodeSelector } : {}),
    ...overrides.config,
  };
  const controller = new RecoveryController({
    kc,
    fenceConfig: overrides.fenceConfig ?? {
      templates: { node: { driver: driver?.name ?? "" } },
      defaultTemplate: "node",
    },
    drivers: overrides.drivers ?? new Map(driver ? [[driver.name, driver]] : []),
    log: (message) => {
      const line = `[controller ${config.identity}] ${message}`;
      controllerTail.push(line);
      progress.info(line);
    },
    ...overrides,
    config,
  });
  await steps.step(
    `start the recovery controller (unhealthyAfter ${config.unhealthyAfterMs / 1000}s${driver ? `, driver ${driver.name}` : ""})`,
    () => {
      controller.start();
      return Promise.resolve();
    },
  );
  await steps.step("let the controller see every node renew", () =>
    letItSeeEveryNode(parts, controller, config),
  );
  steps.registerUndo(`stop the recovery controller (${config.identity})`, () => controller.stop());
  // Runs before the stop (undo is last-in first-out), after the nodes are back: a fence left
  // half-undone would be resumed by the next scenario's controller.
  // Deleting them (once finished) leaves the next scenario no fence history: no per-node rate
  // limit carried over, no earlier fence taken for its own. Idempotent: with several
  // controllers, the one registered last runs it while every controller still runs.
  steps.registerUndo("wait for the controller to finish every NodeFence, then delete them", () =>
    deleteFinishedFences(kc),
  );
  return controller;
}
