// A rekindle-made kind cluster used AS an existing cluster (only its kubeconfig reaches it, and
// rekindle's node agent its nodes): kept after a short run, the agent image loaded onto its
// workers, and the looks the tests take at a node (its Ready condition, `docker exec` to read).
import { execa } from "execa";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureControllerImage } from "../../lib/cluster/kind/image/controller-image.js";
import { k8s, nodeConditionStatus } from "../../lib/kube/client.js";
import { consoleProgress } from "../../lib/util/progress.js";
import { pollUntil } from "../../lib/util/time.js";
import { KIND_FAST_RUN } from "./kind-run.js";
import { REKINDLE_BIN } from "./rekindle-run.js";

/** The three workers kind-config.yaml gives a cluster named `cluster`. */
export function kindWorkers(cluster: string): string[] {
  return [`${cluster}-worker`, `${cluster}-worker2`, `${cluster}-worker3`];
}

/**
 * Makes (or reuses, when it runs) the kind cluster `cluster` with a preflight-only `rekindle run
 * --provider kind --keep-cluster` at the fast profile; returns its kubeconfig path.
 */
export async function keptKindCluster(cluster: string): Promise<string> {
  const up = await execa(
    process.execPath,
    [
      REKINDLE_BIN,
      ...KIND_FAST_RUN,
      "--suite",
      "preflight",
      "--keep-cluster",
      "--no-html",
      "--cluster-name",
      cluster,
      "--report-dir",
      mkdtempSync(join(tmpdir(), "kind-as-existing-")),
    ],
    { reject: false, all: true, timeout: 15 * 60_000 },
  );
  const path = /export KUBECONFIG=([^\s;]+)/.exec(up.all)?.[1];
  if (path === undefined) throw new Error(`no kept kind cluster: ${up.all}`);
  return path;
}

/** Builds (or finds) rekindle's image as `tag` and loads it onto the workers; returns a line saying how long. */
export async function loadRekindleImage(
  kind: string,
  cluster: string,
  workers: readonly string[],
  tag: string,
): Promise<string> {
  const image = await ensureControllerImage({ tag, progress: consoleProgress() });
  const started = Date.now();
  await execa(kind, ["load", "docker-image", tag, "--name", cluster, "--nodes", workers.join(",")]);
  return `image ${image.tag} (${image.built ? "built" : "cached"}) loaded onto ${workers.join(", ")} in ${Date.now() - started} ms`;
}

/** A command's output on a kind node (looking only: faults go through the agent). */
export async function onNode(node: string, script: string): Promise<string> {
  return (await execa("docker", ["exec", node, "sh", "-c", script], { reject: false })).stdout.trim();
}

/** Waits until `node`'s Ready condition is True, or anything but True; resolves to the ms it took. */
export type ReadyWait = (node: string, want: "True" | "not True", timeoutMs: number) => Promise<number>;

export function readyWait(core: k8s.CoreV1Api): ReadyWait {
  return async (node, want, timeoutMs) => {
    const started = Date.now();
    await pollUntil(
      async () => {
        const status = nodeConditionStatus(await core.readNode({ name: node }), "Ready") ?? "Unknown";
        return (want === "True") === (status === "True") ? true : undefined;
      },
      { what: `${node} Ready ${want}`, timeoutMs, intervalMs: 500 },
    );
    return Date.now() - started;
  };
}
