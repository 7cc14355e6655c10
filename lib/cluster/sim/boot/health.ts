// Health probes of the control-plane processes, and the wait that turns "exited" or "never
// healthy" into an error carrying the process's log.
import { existsSync, readFileSync } from "node:fs";
import { RekindleError } from "../../../errors.js";
import { isDaemonRunning, logTail, type DaemonRecord } from "../../../util/daemon.js";
import { httpGet } from "../../../util/http.js";
import { pollUntil } from "../../../util/time.js";
import type { SimLayout } from "./layout.js";
import type { SimClusterState } from "./state.js";

export type HealthProbe = () => Promise<boolean>;

export function etcdHealthy(state: SimClusterState): HealthProbe {
  return async () => {
    const res = await httpGet(`http://127.0.0.1:${state.ports.etcdClient}/health`);
    return res.status === 200 && res.body.includes('"true"');
  };
}

export function apiserverReady(state: SimClusterState, layout: SimLayout, adminToken: string): HealthProbe {
  return async () => {
    if (!existsSync(layout.apiserverCertificate)) return false;
    const res = await httpGet(`${state.apiserverUrl}/readyz`, {
      ca: readFileSync(layout.apiserverCertificate),
      bearerToken: adminToken,
    });
    return res.status === 200;
  };
}

// The controllers' serving certs are throwaway self-signed ones made in memory; only /healthz is read.
function insecureHealthz(port: number): HealthProbe {
  return async () => (await httpGet(`https://127.0.0.1:${port}/healthz`, { insecure: true })).status === 200;
}

export function controllerManagerHealthy(state: SimClusterState): HealthProbe {
  return insecureHealthz(state.ports.controllerManager);
}

export function schedulerHealthy(state: SimClusterState): HealthProbe {
  return insecureHealthz(state.ports.scheduler);
}

/**
 * Polls `healthy` until it says yes. Fails at once with PROCESS_EXITED (log tail, command line)
 * if the process exits, or with TIMEOUT (log tail) after `timeoutMs`.
 */
export async function waitHealthy(
  record: DaemonRecord,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  healthy: HealthProbe,
): Promise<void> {
  try {
    await pollUntil(
      async () => {
        if (!isDaemonRunning(record)) {
          throw new RekindleError("PROCESS_EXITED", `${record.name} exited during startup`, {
            details: {
              log: record.logPath,
              outputTail: logTail(record.logPath),
              command: [record.command, ...record.args].join(" "),
            },
          });
        }
        try {
          return (await healthy()) ? true : undefined;
        } catch {
          return undefined; // Not listening yet.
        }
      },
      {
        what: `${record.name} to become healthy`,
        timeoutMs,
        intervalMs: 200,
        ...(signal ? { signal } : {}),
      },
    );
  } catch (error) {
    if (error instanceof RekindleError && error.code === "TIMEOUT") {
      throw new RekindleError("TIMEOUT", error.message, {
        details: { log: record.logPath, outputTail: logTail(record.logPath) },
        cause: error,
      });
    }
    throw error;
  }
}
