// The wait for workers to be usable: Ready, and no longer carrying the registration-time taint.
import { k8s, nodeConditionStatus } from "../../kube/client.js";
import { hasTaint, NOT_READY_TAINT } from "../../kube/queries.js";
import { pollUntil } from "../../util/time.js";
import type { SimSession } from "./session.js";

/** Waits until every node whose kwok runs reports Ready=True and carries no not-ready taint. */
export async function waitForSimNodesReady(
  session: SimSession,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const core = session.kubeConfig().makeApiClient(k8s.CoreV1Api);
  const wanted = session.state.nodes.filter((n) => n.power === "running").map((n) => n.name);
  await pollUntil(
    async () => {
      const list = await core.listNode();
      // Ready, and the node lifecycle controller has lifted its registration-time not-ready
      // taint: until then nothing schedules there.
      const ready = new Set(
        list.items
          .filter((n) => nodeConditionStatus(n, "Ready") === "True" && !hasTaint(n, NOT_READY_TAINT))
          .map((n) => n.metadata?.name),
      );
      return wanted.every((n) => ready.has(n)) ? true : undefined;
    },
    {
      what: `nodes ${wanted.join(", ")} to be Ready`,
      timeoutMs,
      intervalMs: 500,
      ...(signal ? { signal } : {}),
      onWait: (ms) => {
        session.progress.info(`waiting for nodes Ready (${Math.round(ms / 1000)}s)`);
      },
    },
  );
}
