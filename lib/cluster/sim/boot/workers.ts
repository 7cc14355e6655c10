// The boot steps that make the workers: their Node objects (registered before any kwok starts, as
// upstream's node registration races no kubelet), the kwoks that play them (kubelet/kwok-groups.ts), and
// the waits until every one is Ready. Sized for 1000 workers: registration runs a few at a time,
// and the waits poll less often on large clusters.
import { k8s } from "../../../kube/client.js";
import { inBatches } from "../../../util/batches.js";
import type { BootStep } from "./steps.js";
import type { SimBootContext } from "./context.js";
import { waitForSimDaemonSets, SIM_DAEMONSETS } from "./daemonsets.js";
import { planKwoks } from "../kubelet/kwok-groups.js";
import { kwokStageFiles } from "../kubelet/kwok-stages.js";
import { waitForSimNodesReady } from "./nodes-ready.js";
import type { SimKwokGroupState, SimNodeState } from "./state.js";
import { readyPollIntervalMs, scaledTimeoutMs, SIM_TIMEOUTS } from "./timeouts.js";
import { sharedKwokSpec, workerKwokSpec, workerName, workerNodeObject } from "./worker-nodes.js";

/** Node creations in flight at once: enough to register 1000 nodes in seconds, few enough for a 2-core apiserver. */
const REGISTER_CONCURRENCY = 32;

export const SIM_WORKER_BOOT_STEPS = {
  register: {
    name: "register worker nodes",
    async run({ session, options }) {
      const { state, layout } = session;
      const api = session.kubeConfig().makeApiClient(k8s.CoreV1Api);
      const plan = planKwoks({
        workers: options.workers,
        zones: options.zones,
        dedicated: options.dedicatedKwoks,
        nodesPerKwok: options.nodesPerKwok,
      });
      const common = {
        kwokBinary: state.binaries.kwok,
        layout,
        profile: options.profile,
        stagesFile: kwokStageFiles(layout).nodeStages,
      };
      const nodes: SimNodeState[] = plan.workers.map(({ index, zone, group }) => {
        const name = workerName(index);
        return group === undefined
          ? {
              name,
              zone,
              index,
              kwok: workerKwokSpec({ ...common, name, index }),
              process: undefined,
              power: "stopped",
            }
          : { name, zone, index, group, process: undefined, power: "stopped" };
      });
      await inBatches(nodes, REGISTER_CONCURRENCY, async (node) => {
        const placement = { zone: node.zone, index: node.index ?? 0, group: node.group };
        await api.createNode({ body: workerNodeObject(node.name, placement, state.runId) });
      });
      state.nodes.push(...nodes);
      if (plan.groups.length > 0) {
        state.kwokGroups = plan.groups.map((g): SimKwokGroupState => ({
          name: g.name,
          zone: g.zone,
          kwok: sharedKwokSpec({ ...common, group: g.name }),
          process: undefined,
        }));
      }
      session.save();
      const shared = plan.workers.length - options.dedicatedKwoks;
      return `${options.workers} nodes registered${shared > 0 ? ` (${shared} in ${plan.groups.length} shared kwoks)` : ""}`;
    },
  },
  startKwoks: {
    name: "start the workers' kwoks",
    run({ session }) {
      const { state } = session;
      let own = 0;
      for (const node of state.nodes) {
        if (!node.kwok) continue;
        node.process = session.spawn(node.kwok, node.name);
        node.power = "running";
        own++;
      }
      for (const group of state.kwokGroups ?? []) {
        group.process = session.spawn(group.kwok, group.kwok.name);
        for (const node of state.nodes) if (node.group === group.name) node.power = "running";
      }
      session.save();
      const shared = state.kwokGroups?.length ?? 0;
      return Promise.resolve(`${own} own${shared > 0 ? `, ${shared} shared` : ""} started`);
    },
  },
  nodesReady: {
    name: "wait for nodes Ready and the default ServiceAccount",
    async run(context) {
      const workers = context.options.workers;
      await Promise.all([
        waitForSimNodesReady(
          context.session,
          scaledTimeoutMs(SIM_TIMEOUTS.nodesReadyMs, workers),
          context.signal,
          {
            intervalMs: readyPollIntervalMs(workers),
          },
        ),
        ...context.background,
      ]);
      return "ready";
    },
  },
  daemonSets: {
    name: "wait for the node DaemonSets on every worker",
    async run({ session, signal, options }) {
      const nodes = session.state.nodes.map((n) => n.name);
      await waitForSimDaemonSets(session.kubeConfig(), nodes, {
        timeoutMs: scaledTimeoutMs(SIM_TIMEOUTS.daemonSetsReadyMs, options.workers),
        intervalMs: readyPollIntervalMs(options.workers),
        signal,
      });
      return `${SIM_DAEMONSETS.length} x ${nodes.length} pods Ready`;
    },
  },
} satisfies Record<string, BootStep<SimBootContext>>;
