// What an operator does by hand to a lost node's workloads: force-delete its pods, drain it with
// the real kubectl. Shared by the node-loss family's released-by-hand scenarios and scenario files.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RekindleError } from "../errors.js";
import { isNotFound, k8s } from "../kube/client.js";
import { podsOnNode } from "../kube/queries.js";
import { runCommand } from "../util/command.js";
import type { ScenarioContext } from "./harness.js";

/** The drain an operator types for a node that is gone. */
export const DRAIN_FLAGS = ["--force", "--delete-emptydir-data", "--ignore-daemonsets"];

/** Which pods of the namespace on the node an operator force-deletes: its StatefulSet pods, or all. */
export type ForceDeleteScope = "statefulset-pods" | "all-pods";

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
