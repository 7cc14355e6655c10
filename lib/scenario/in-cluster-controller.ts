// The recovery controller as users deploy it, in a scenario: deployed through the provider's
// in-cluster-controller capability, kept off the node the scenario will lose (losing the leader
// is controller-failover's scenario, not this one), and settled before the fault as a production
// controller would be: a Ready replica holds the leader Lease and has seen every node renew.
import { DEFAULT_LEADER_LEASE } from "../controller/leader.js";
import type { DeployedController } from "../cluster/provider.js";
import { isNotFound, k8s } from "../kube/client.js";
import { leaseRenewIntervalMs } from "../cluster/profiles.js";
import { pollUntil, sleep } from "../util/time.js";
import { setUnschedulable } from "../kube/cordon.js";
import { deleteFinishedFences } from "./fences.js";
import type { ScenarioContext } from "./harness.js";

/** Both replicas Ready again after one is moved. */
const MOVE_TIMEOUT_MS = 120_000;
/** A replica of the new configuration holds the leader Lease (a standby takes over an expired one within 15 s). */
const LEADER_TIMEOUT_MS = 60_000;

/** Moves any replica on `node` elsewhere: cordon, delete it, wait for all Ready off the node, uncordon. */
async function moveReplicasOff(
  context: ScenarioContext<"in-cluster-controller">,
  controller: DeployedController,
  node: string,
): Promise<void> {
  const pods = await controller.readyPods();
  const onNode = pods.filter((p) => p.node === node);
  if (onNode.length === 0) return;
  const { kc, signal } = context;
  await context.steps.step(
    `move the controller replica off ${node} (cordon, delete its pod, uncordon)`,
    async () => {
      await setUnschedulable(kc, node, true);
      try {
        const core = kc.makeApiClient(k8s.CoreV1Api);
        for (const pod of onNode)
          await core.deleteNamespacedPod({ name: pod.name, namespace: controller.namespace });
        await pollUntil(
          async () => {
            const ready = await controller.readyPods();
            return ready.length === pods.length && ready.every((p) => p.node !== node) ? true : undefined;
          },
          {
            what: `${pods.length} controller replicas Ready, none on ${node}`,
            timeoutMs: MOVE_TIMEOUT_MS,
            intervalMs: 500,
            ...(signal ? { signal } : {}),
          },
        );
      } finally {
        await setUnschedulable(kc, node, false);
      }
    },
  );
}

/** The pod whose controller holds the leader Lease (identities are `<hostname>-<pid>`, hostname the pod's name). */
async function leaderPod(kc: k8s.KubeConfig, controller: DeployedController): Promise<string | undefined> {
  let holder: string;
  try {
    const lease = await kc
      .makeApiClient(k8s.CoordinationV1Api)
      .readNamespacedLease({ name: DEFAULT_LEADER_LEASE, namespace: controller.namespace });
    holder = lease.spec?.holderIdentity ?? "";
  } catch (error) {
    // Not created yet: no replica has run an election.
    if (isNotFound(error)) return undefined;
    throw error;
  }
  return (await controller.readyPods()).find((p) => holder.startsWith(`${p.name}-`))?.name;
}

/**
 * Deploys the controller in the cluster with its undo (registered so the NodeFences are finished
 * and deleted while it still runs, then it is removed), keeps it off `lostNode`, and waits until
 * its leader is elected and has seen every node renew once.
 */
export async function deployControllerInCluster(
  context: ScenarioContext<"in-cluster-controller">,
  lostNode: string,
): Promise<DeployedController> {
  const { steps, kc, signal } = context;
  const deployer = context.cluster.capabilities["in-cluster-controller"];
  const controller = await steps.step(
    "deploy the controller from deploy/controller/ (its image loaded into the nodes)",
    () => deployer.deployController(signal),
  );
  steps.registerUndo("remove the in-cluster controller", () => controller.remove());
  steps.registerUndo("wait for the controller to finish every NodeFence, then delete them", () =>
    deleteFinishedFences(kc),
  );
  await moveReplicasOff(context, controller, lostNode);
  const leader = await steps.step("wait for a Ready replica to hold the leader Lease", () =>
    pollUntil(() => leaderPod(kc, controller), {
      what: `a Ready controller pod holding Lease ${controller.namespace}/${DEFAULT_LEADER_LEASE}`,
      timeoutMs: LEADER_TIMEOUT_MS,
      intervalMs: 500,
      ...(signal ? { signal } : {}),
    }),
  );
  // As in production, where the controller runs long before a fault: one renewal of every node
  // seen (the in-process runs ask the controller; a pod's state is not readable from here).
  const renewMs = leaseRenewIntervalMs(context.cluster.profile) + 2_000;
  await steps.step(`let the leader (${leader}) see every node renew (${renewMs / 1000}s)`, () =>
    sleep(renewMs, signal),
  );
  return controller;
}
