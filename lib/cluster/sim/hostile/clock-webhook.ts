// Setting, changing and clearing a sim node's kubelet clock skew (clock-skew.ts explains the
// mechanism). The webhook server is a component of the cluster, started the first time a clock is
// skewed and stopped with the cluster; the MutatingWebhookConfiguration lists the skewed nodes and
// exists only while there is one. A node keeps its skew across stop, start and re-registration
// (same machine, same clock); while its kwok is killed or frozen it writes nothing to shift.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { RekindleError } from "../../../errors.js";
import { applyManifests, RUN_LABEL } from "../../../kube/apply.js";
import { isNotFound, k8s } from "../../../kube/client.js";
import { isDaemonRunning, type DaemonSpec } from "../../../util/daemon.js";
import { nodeEntryCommand } from "../../../util/project-files.js";
import { httpGet } from "../../../util/http.js";
import { freeLoopbackPorts, releaseLoopbackPorts } from "../../../util/ports.js";
import { CLOCK_WEBHOOK_CONFIGURATION, clockWebhookConfiguration, type ClockSkew } from "./clock-skew.js";
import { waitHealthy } from "../boot/health.js";
import type { SimLayout } from "../boot/layout.js";
import { SIM_IDENTITIES } from "../boot/pki.js";
import type { SimSession } from "../boot/session.js";
import { SIM_TIMEOUTS } from "../boot/timeouts.js";

export const CLOCK_WEBHOOK_COMPONENT = "sim-clock-webhook";

/** Offsets beyond a day are typos, not clock skew. */
export const MAX_CLOCK_OFFSET_MS = 86_400_000;

export function clockWebhookSpec(layout: SimLayout, port: number): DaemonSpec {
  const entry = nodeEntryCommand(import.meta.url, "./clock-webhook-main");
  return {
    name: CLOCK_WEBHOOK_COMPONENT,
    command: entry.command,
    args: [
      ...entry.args,
      `--port=${port}`,
      `--cert=${layout.apiserverCertificate}`,
      `--key=${layout.apiserverKey}`,
    ],
    logPath: join(layout.logsDir, `${CLOCK_WEBHOOK_COMPONENT}.log`),
  };
}

/** Starts the webhook server unless it runs; resolves to its port once it answers. */
async function ensureClockWebhook(session: SimSession, signal: AbortSignal | undefined): Promise<number> {
  const { state, layout } = session;
  const running = state.components.find((c) => c.name === CLOCK_WEBHOOK_COMPONENT && isDaemonRunning(c));
  if (running && state.clock) return state.clock.webhookPort;
  state.components = state.components.filter((c) => c.name !== CLOCK_WEBHOOK_COMPONENT);
  const [port = 0] = await freeLoopbackPorts(1);
  const record = session.startComponent(clockWebhookSpec(layout, port));
  const ca = readFileSync(layout.apiserverCertificate);
  try {
    await waitHealthy(
      record,
      SIM_TIMEOUTS.clockWebhookReadyMs,
      signal,
      async () => (await httpGet(`https://127.0.0.1:${port}/healthz`, { ca })).status === 200,
    );
  } finally {
    releaseLoopbackPorts([port]);
  }
  state.clock = { webhookPort: port, skews: state.clock?.skews ?? {} };
  session.save();
  return port;
}

/** A skew's offset is a whole number of milliseconds within a day either way. */
export function validateClockSkew(skew: ClockSkew): void {
  if (!Number.isInteger(skew.offsetMs) || Math.abs(skew.offsetMs) > MAX_CLOCK_OFFSET_MS) {
    throw RekindleError.invalidInput(
      "clock offset (ms)",
      skew.offsetMs,
      `a whole number of milliseconds within a day either way (-24h to +24h)`,
    );
  }
}

/**
 * Sets (`skew`) or clears (undefined, or offset 0) the clock skew of `nodeName`'s kubelet. Takes
 * effect at the node's next Lease renewal; resolves once the apiserver has the configuration.
 */
export async function setSimClockSkew(
  session: SimSession,
  nodeName: string,
  skew: ClockSkew | undefined,
  signal?: AbortSignal,
): Promise<void> {
  session.reload();
  session.node(nodeName); // An unknown node is an error naming the valid ones.
  const set = skew !== undefined && skew.offsetMs !== 0 ? skew : undefined;
  if (set) validateClockSkew(set);
  const others = Object.entries(session.state.clock?.skews ?? {}).filter(([node]) => node !== nodeName);
  const skews: Record<string, ClockSkew> = Object.fromEntries(set ? [...others, [nodeName, set]] : others);
  const kc = session.kubeConfig();
  if (Object.keys(skews).length === 0) {
    try {
      await kc
        .makeApiClient(k8s.AdmissionregistrationV1Api)
        .deleteMutatingWebhookConfiguration({ name: CLOCK_WEBHOOK_CONFIGURATION });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  } else {
    const port = await ensureClockWebhook(session, signal);
    const configuration = clockWebhookConfiguration(
      skews,
      {
        port,
        caBundle: readFileSync(session.layout.apiserverCertificate, "utf8"),
        kwokUser: SIM_IDENTITIES.kwok.user,
      },
      { [RUN_LABEL]: session.state.runId },
    );
    await applyManifests(kc, [configuration]);
  }
  if (session.state.clock) session.state.clock.skews = skews;
  session.save();
  const what = skews[nodeName]
    ? `clock ${formatOffset(skews[nodeName].offsetMs)} (${skews[nodeName].step ? "stepped" : "slewed"})`
    : "clock true again";
  session.progress.info(`node ${nodeName}: ${what}`);
}

/** "-30s", "+1.5s": an offset for messages. */
export function formatOffset(offsetMs: number): string {
  return `${offsetMs < 0 ? "-" : "+"}${Math.abs(offsetMs) / 1000}s`;
}
