// How one fault action is applied to and reverted on a node, through the provider's capability
// objects (this process) or through a reconnection from a journal record (reconnect.ts).
import type { CapabilityMap, NodeCapability, NodeFaultOptions } from "../cluster/provider.js";
import { RekindleError } from "../errors.js";
import { describeAction, type FaultAction } from "./types.js";

/** Applies and reverts one fault action, node by node. Revert of a node not (fully) faulted is a no-op. */
export interface FaultActuator {
  /**
   * `deadline`: the fault's, for actuators that revert by themselves (the node agent). `onEffect`:
   * called by actuators whose apply sets up before the fault takes effect (effectAfterSetup).
   */
  apply(node: string, deadline?: Date, onEffect?: () => void): Promise<void>;
  /** The provider says when the fault takes effect (onEffect); others take effect as apply starts. */
  readonly effectAfterSetup?: boolean;
  revert(node: string): Promise<void>;
}

function need<C extends NodeCapability>(
  capabilities: Partial<CapabilityMap>,
  capability: C,
  action: FaultAction,
): CapabilityMap[C] {
  const found = capabilities[capability];
  if (found === undefined) {
    throw new RekindleError(
      "PRECONDITION",
      `a ${describeAction(action)} fault needs the ${capability} capability, which this cluster does not offer`,
      { hint: "a scenario declares what it needs in `requires`; the provider lists what it lacks" },
    );
  }
  return found;
}

function deadlineOption(deadline: Date | undefined): NodeFaultOptions {
  return deadline !== undefined ? { deadline } : {};
}

/** The actuator over this process's capability objects; checked before anything is applied. */
export function capabilityActuator(action: FaultAction, capabilities: Partial<CapabilityMap>): FaultActuator {
  switch (action.kind) {
    case "stop": {
      const lifecycle = need(capabilities, "lifecycle", action);
      return {
        apply: (node, deadline) => lifecycle.stopNode(node, deadlineOption(deadline)),
        revert: (node) => lifecycle.startNode(node),
      };
    }
    case "graceful-shutdown": {
      const shutdown = need(capabilities, "graceful-shutdown", action);
      const lifecycle = need(capabilities, "lifecycle", action);
      return { apply: (node) => shutdown.shutdownNode(node), revert: (node) => lifecycle.startNode(node) };
    }
    case "partition": {
      const partition = need(capabilities, "partition", action);
      return {
        apply: (node, deadline) => partition.partitionNode(node, deadlineOption(deadline)),
        revert: (node) => partition.healNode(node),
      };
    }
    case "pressure": {
      const pressure = need(capabilities, "pressure", action);
      return {
        apply: (node, deadline, onEffect) =>
          pressure.applyPressure(node, action.pressure, {
            ...deadlineOption(deadline),
            ...(onEffect ? { onEffect } : {}),
          }),
        effectAfterSetup: true,
        revert: (node) => pressure.relievePressure(node, action.pressure),
      };
    }
  }
}
