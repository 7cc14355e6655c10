// How a sim cluster boots, as the named steps it takes in order (run by steps.ts): the
// control plane from etcd up, then the objects and processes that make the workers.
import { RekindleError } from "../../../errors.js";
import { isNotFound, k8s } from "../../../kube/client.js";
import { pollUntil } from "../../../util/time.js";
import type { SimBootContext } from "./context.js";
import { runBootSteps, type BootStep } from "./steps.js";
import {
  apiserverSpec,
  controllerManagerSpec,
  etcdSpec,
  schedulerSpec,
  type ControlPlaneParts,
} from "./control-plane.js";
import { writeClusterCredentials } from "./credentials.js";
import { applySimDaemonSets, SIM_DAEMONSETS } from "./daemonsets.js";
import { SIM_FILLER_BOOT_STEP } from "./filler.js";
import {
  apiserverReady,
  controllerManagerHealthy,
  etcdHealthy,
  schedulerHealthy,
  waitHealthy,
} from "./health.js";
import { kwokStageFiles, writeKwokStages } from "../kubelet/kwok-stages.js";
import type { ValidatedSimOptions } from "./options.js";
import type { SimSession } from "./session.js";
import type { TimingProfile } from "../../profiles.js";
import { applySimStorage, attacherSpec, csiProvisionerSpec } from "../kubelet/storage.js";
import { SIM_TIMEOUTS } from "./timeouts.js";
import { SIM_WORKER_BOOT_STEPS } from "./workers.js";

/** This boot's binaries, files and ports, and the profile its command lines carry. */
function controlPlaneParts(session: SimSession, profile: TimingProfile): ControlPlaneParts {
  return { bin: session.state.binaries, layout: session.layout, ports: session.state.ports, profile };
}

function adminToken(context: SimBootContext): string {
  if (!context.tokens) {
    throw new RekindleError("INTERNAL", "sim boot steps out of order: no credentials written yet");
  }
  return context.tokens.admin;
}

function core(context: SimBootContext): k8s.CoreV1Api {
  return context.session.kubeConfig().makeApiClient(k8s.CoreV1Api);
}

/** Pods are refused until the default ServiceAccount exists: waited for alongside the nodes. */
function defaultServiceAccount(context: SimBootContext): Promise<boolean> {
  const api = core(context);
  return pollUntil(
    async () => {
      try {
        await api.readNamespacedServiceAccount({ name: "default", namespace: "default" });
        return true;
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
    {
      what: "the default ServiceAccount",
      timeoutMs: SIM_TIMEOUTS.defaultServiceAccountMs,
      ...(context.signal ? { signal: context.signal } : {}),
    },
  );
}

export const SIM_BOOT_STEPS: readonly BootStep<SimBootContext>[] = [
  {
    name: "write credentials and kubeconfigs",
    run(context) {
      context.tokens = writeClusterCredentials(context.session.state, context.session.layout);
      return Promise.resolve(`in ${context.session.layout.pkiDir}`);
    },
  },
  {
    name: "start etcd",
    async run({ session, signal, options }) {
      const { state } = session;
      const etcd = session.startComponent(etcdSpec(controlPlaneParts(session, options.profile)));
      await waitHealthy(etcd, SIM_TIMEOUTS.etcdReadyMs, signal, etcdHealthy(state));
      return `healthy (pid ${etcd.pid})`;
    },
  },
  {
    name: "start kube-apiserver",
    async run(context) {
      const { session, signal, options } = context;
      const { state, layout } = session;
      const apiserver = session.startComponent(apiserverSpec(controlPlaneParts(session, options.profile)));
      await waitHealthy(
        apiserver,
        SIM_TIMEOUTS.apiserverReadyMs,
        signal,
        apiserverReady(state, layout, adminToken(context)),
      );
      return `ready (pid ${apiserver.pid})`;
    },
  },
  {
    name: "start kube-controller-manager and kube-scheduler",
    async run({ session, signal, options }) {
      const { state } = session;
      const parts = controlPlaneParts(session, options.profile);
      const kcm = session.startComponent(controllerManagerSpec(parts));
      const scheduler = session.startComponent(schedulerSpec(parts));
      await Promise.all([
        waitHealthy(kcm, SIM_TIMEOUTS.controllerReadyMs, signal, controllerManagerHealthy(state)),
        waitHealthy(scheduler, SIM_TIMEOUTS.controllerReadyMs, signal, schedulerHealthy(state)),
      ]);
      return `healthy (pids ${kcm.pid}, ${scheduler.pid})`;
    },
  },
  {
    name: "apply the sim storage (CSIDriver, StorageClass)",
    async run(context) {
      const serviceAccount = defaultServiceAccount(context);
      // Joined by the last step; this only keeps an early rejection from counting as unhandled.
      serviceAccount.catch(() => undefined);
      context.background.push(serviceAccount);
      await applySimStorage(context.session.kubeConfig(), context.session.state.runId);
      return "applied";
    },
  },
  {
    name: "apply the node DaemonSets (kube-system)",
    async run({ session }) {
      const { state } = session;
      await applySimDaemonSets(session.kubeConfig(), state.runId, state.binaries.versions.kubernetes);
      return SIM_DAEMONSETS.join(", ");
    },
  },
  {
    name: "write kwok stages",
    run({ session, options }) {
      writeKwokStages(kwokStageFiles(session.layout), session.state.binaries.versions, options);
      return Promise.resolve(
        `pod start ${options.podStartMs}${options.podStartSpreadMs > 0 ? `–${options.podStartMs + options.podStartSpreadMs}` : ""} ms, attach ${options.attachMs} ms`,
      );
    },
  },
  SIM_WORKER_BOOT_STEPS.register,
  {
    name: "start the sim CSI provisioner and the kwok attacher",
    run({ session }) {
      const { state, layout } = session;
      const csi = session.startComponent(
        csiProvisionerSpec(layout, session.profile.simKubelet.statusUpdateIntervalMs),
      );
      const attacher = session.startComponent(
        attacherSpec(layout, state.binaries.kwok, kwokStageFiles(layout).attacherStages),
      );
      return Promise.resolve(`started (pids ${csi.pid}, ${attacher.pid})`);
    },
  },
  SIM_WORKER_BOOT_STEPS.startKwoks,
  SIM_WORKER_BOOT_STEPS.nodesReady,
  SIM_WORKER_BOOT_STEPS.daemonSets,
  SIM_FILLER_BOOT_STEP,
];

export async function bootSimCluster(
  session: SimSession,
  options: ValidatedSimOptions,
  signal: AbortSignal | undefined,
): Promise<void> {
  await runBootSteps(SIM_BOOT_STEPS, { session, options, signal, background: [] }, session.progress);
}
