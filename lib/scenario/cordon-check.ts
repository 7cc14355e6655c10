// Every scenario gives the cluster back as it found it: a node it cordoned (a drain, the
// controller's replica move off a node about to fail) must be schedulable again once its undos ran,
// or the next scenario on a kept or existing cluster runs a worker short (found on kind: two
// drains left both other workers cordoned, and a StatefulSet pod found no node).
import { RekindleError } from "../errors.js";
import { k8s } from "../kube/client.js";

/** The names of the cordoned nodes (spec.unschedulable). */
export async function cordonedNodes(kc: k8s.KubeConfig): Promise<Set<string>> {
  const nodes = await kc.makeApiClient(k8s.CoreV1Api).listNode();
  return new Set(
    nodes.items.filter((n) => n.spec?.unschedulable === true).map((n) => n.metadata?.name ?? ""),
  );
}

/**
 * The error for the fault's nodes that are cordoned after the undos and were schedulable before
 * the scenario, if any. Only the fault's nodes: on an existing cluster an autoscaler or an
 * operator may cordon any other node meanwhile, which is not the scenario's doing.
 */
export function leftCordoned(
  scenario: string,
  before: ReadonlySet<string>,
  after: ReadonlySet<string>,
  faultNodes: readonly string[],
): RekindleError | undefined {
  const left = faultNodes.filter((name) => after.has(name) && !before.has(name)).sort();
  if (left.length === 0) return undefined;
  return new RekindleError(
    "PRECONDITION",
    `${scenario} left ${left.join(", ")} cordoned (schedulable before it; its undos ran)`,
    {
      hint: `uncordon by hand (kubectl uncordon ${left.join(" ")}); a scenario that cordons must register the uncordon as its undo`,
      details: { leftCordoned: left },
    },
  );
}
