// A lying BMC as a scenario sets it: the lie is told from now on, and its undo (registered right
// after) has the BMC tell the truth again, also when the scenario fails half-way.
import type { BmcLie } from "../cluster/bmc-lies.js";
import type { ScenarioContext } from "./harness.js";

/** `node`'s BMC lies as `lie` says until the undo `let the BMC of <node> tell the truth`. */
export async function lieAboutPower(
  context: ScenarioContext<"bmc-lies">,
  node: string,
  lie: Partial<BmcLie>,
): Promise<void> {
  const bmc = context.cluster.capabilities["bmc-lies"];
  await context.steps.step(`make the BMC of ${node} lie`, () => bmc.setBmcLie(node, lie));
  context.steps.registerUndo(`let the BMC of ${node} tell the truth`, () => bmc.clearBmcLie(node));
}
