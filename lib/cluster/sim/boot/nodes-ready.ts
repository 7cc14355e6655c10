// The wait for the sim's workers to be usable (lib/kube/nodes-ready.ts): every node whose kwok runs.
import { waitForNodesReady } from "../../../kube/nodes-ready.js";
import type { SimSession } from "./session.js";

/** Waits until every node whose kwok runs reports Ready=True and carries no not-ready taint. */
export async function waitForSimNodesReady(
  session: SimSession,
  timeoutMs: number,
  signal?: AbortSignal,
  options: { intervalMs?: number } = {},
): Promise<void> {
  const wanted = session.state.nodes.filter((n) => n.power === "running").map((n) => n.name);
  await waitForNodesReady(session.kubeConfig(), wanted, {
    timeoutMs,
    ...(options.intervalMs === undefined ? {} : { intervalMs: options.intervalMs }),
    ...(signal ? { signal } : {}),
    onWait: (ms) => {
      session.progress.info(`waiting for nodes Ready (${Math.round(ms / 1000)}s)`);
    },
  });
}
