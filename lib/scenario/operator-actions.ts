// What an operator does by hand to a lost node's workloads: force-delete its pods, drain it with
// the real kubectl. Shared by the node-loss family's released-by-hand scenarios and scenario files.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RekindleError } from "../errors.js";
import { isNotFound, k8s } from "../kube/client.js";
import { setUnschedulable } from "../kube/cordon.js";
import { hasTaint, NOT_READY_TAINT, podsOnNode, readNode, UNREACHABLE_TAINT } from "../kube/queries.js";
import { SCHEDULER_CATCH_UP_MS } from "../expect/by-hand.js";
import { runCommand } from "../util/command.js";
import { pollUntil, sleep } from "../util/time.js";
import type { ScenarioContext } from "./harness.js";

/** The drain an operator types for a node that is gone. */
export const DRAIN_FLAGS = ["--force", "--delete-emptydir-data", "--ignore-daemonsets"];

/** Which pods of the namespace on the node an operator force-deletes: its StatefulSet pods, or all. */
export type ForceDeleteScope = "statefulset-pods" | "all-pods";

/** How long the node lifecycle controller may take to keep the scheduler off a node it saw go silent. */
const NO_SCHEDULE_TAINT_TIMEOUT_MS = 30_000;

/**
 * Waits until the scheduler can no longer place pods on `node`: the node lifecycle controller's
 * `unreachable` or `not-ready` NoSchedule taint is on it, or it is cordoned. Ready going Unknown
 * and that taint are written apart; a StatefulSet pod force-deleted in between can be recreated
 * and bound back to the dead node (seen on the sim under load: the replacement stayed Terminating
 * there until the node returned, 100 s later). An operator who force-deletes after `kubectl get
 * nodes` shows NotReady meets the same race; one who cordons first does not. `kubectl drain`
 * cordons, so only the force delete needs this. The taint read here is the API's; the scheduler
 * decides on its own watch's copy, so a second passes before this returns.
 */
export async function awaitNodeUnschedulable(context: ScenarioContext, node: string): Promise<void> {
  await pollUntil(
    async () => {
      const n = await readNode(context.kc, node);
      const kept =
        n.spec?.unschedulable === true ||
        hasTaint(n, UNREACHABLE_TAINT, "NoSchedule") ||
        hasTaint(n, NOT_READY_TAINT, "NoSchedule");
      return kept ? true : undefined;
    },
    {
      what: `a NoSchedule taint (${UNREACHABLE_TAINT} or ${NOT_READY_TAINT}) on ${node}`,
      timeoutMs: NO_SCHEDULE_TAINT_TIMEOUT_MS,
      intervalMs: 100,
      ...(context.signal ? { signal: context.signal } : {}),
    },
  );
  await sleep(SCHEDULER_CATCH_UP_MS, context.signal);
}

/**
 * Registers the uncordon of a node about to be drained: `kubectl drain` cordons it first, and the
 * operator uncordons it once it is back. Without this undo a drained node stays unschedulable
 * after the scenario, and the next scenario on the same cluster (kind) has a worker fewer.
 * Call before the drain.
 */
export async function uncordonAfterDrain(context: ScenarioContext, node: string): Promise<void> {
  // A node someone else had cordoned before the drain stays cordoned: the undo gives back what was.
  const read = await context.kc.makeApiClient(k8s.CoreV1Api).readNode({ name: node });
  if (read.spec?.unschedulable === true) {
    context.progress.info(`${node} was cordoned before the drain: left cordoned after it`);
    return;
  }
  context.steps.registerUndo(`uncordon ${node} (kubectl drain cordoned it)`, async () => {
    await setUnschedulable(context.kc, node, false);
  });
}

/** `kubectl delete pod --force --grace-period=0` on the scenario namespace's pods on the node. */
export async function forceDeletePods(
  context: ScenarioContext,
  node: string,
  scope: ForceDeleteScope = "statefulset-pods",
): Promise<string[]> {
  const core = context.kc.makeApiClient(k8s.CoreV1Api);
  const pods = (await podsOnNode(context.kc, node)).filter(
    (p) =>
      p.metadata?.namespace === context.namespace &&
      (scope === "all-pods" || p.metadata.ownerReferences?.some((o) => o.kind === "StatefulSet")),
  );
  await Promise.all(
    pods.map(async (p) => {
      try {
        // What kubectl sends for --force --grace-period=0: a delete with no grace at all.
        await core.deleteNamespacedPod({
          name: p.metadata?.name ?? "",
          namespace: context.namespace,
          gracePeriodSeconds: 0,
        });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }),
  );
  return pods.map((p) => p.metadata?.name ?? "");
}

/**
 * The real `kubectl drain` with the flags an operator reaches for when a node is gone; with
 * `noGrace`, also `--grace-period=0`. Resolves whether it drained (false: it timed out or failed,
 * its output printed).
 */
export async function drainNode(
  context: ScenarioContext,
  node: string,
  options: { noGrace: boolean; timeoutMs: number },
): Promise<boolean> {
  const kubectl = context.cluster.kubectlPath?.();
  if (kubectl === undefined) {
    throw new RekindleError("NOT_FOUND", `no kubectl for the ${context.cluster.provider} cluster`, {
      hint: "put kubectl on PATH or set REKINDLE_KUBECTL=/path/to/kubectl (the sim provider brings its own)",
    });
  }
  const dir = mkdtempSync(join(tmpdir(), "rekindle-drain-"));
  try {
    const kubeconfig = join(dir, "kubeconfig");
    writeFileSync(kubeconfig, context.kc.exportConfig(), { mode: 0o600 });
    const args = [
      "--kubeconfig",
      kubeconfig,
      "drain",
      node,
      ...DRAIN_FLAGS,
      ...(options.noGrace ? ["--grace-period=0"] : []),
      `--timeout=${options.timeoutMs / 1000}s`,
    ];
    try {
      const { stdout, stderr } = await runCommand(kubectl, args, {
        timeoutMs: options.timeoutMs + 30_000,
        ...(context.signal ? { signal: context.signal } : {}),
      });
      context.progress.info(`${stdout}\n${stderr}`.trim());
      return true;
    } catch (error) {
      // A drain that exits non-zero (its timeout) is the outcome being observed; anything else is not.
      if (!(error instanceof RekindleError) || typeof error.details["exitCode"] !== "number") throw error;
      const output = error.details["outputTail"];
      const tail = (typeof output === "string" ? output : "").split("\n").slice(-3).join(" | ");
      context.progress.info(`kubectl drain did not finish (${error.message}): ${tail}`);
      return false;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
