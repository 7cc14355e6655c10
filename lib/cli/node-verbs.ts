// `rekindle node stop|start|partition|heal|pressure <node>`: the same node faults on every provider,
// through the fault layer (a handle, a journal record in the cluster with a deadline, the rails on
// an existing cluster). A fault outlives the command: its record's deadline bounds it, `rekindle
// node start|heal` ends it sooner, and `rekindle reap` sees it. Arguments are checked first.
import { parseOptions } from "../util/parse-options.js";
import { parseNodeNames } from "../cluster/existing/rails.js";
import { chooseProvider } from "../cluster/create.js";
import type { ClusterUnderTest, PressureKind, ProviderName } from "../cluster/provider.js";
import { SimClusterUnderTest } from "../cluster/sim/under-test.js";
import { RekindleError } from "../errors.js";
import { ConfigMapJournal, type FaultJournal } from "../fault/journal.js";
import { describeRecord } from "../fault/reaper.js";
import { reconnectFromLocator } from "../fault/reconnect.js";
import { describeAction, type FaultAction, type FaultKind, type FaultRecord } from "../fault/types.js";
import { checkVerbDeadline, endNodeFaults, leaveFault, VERB_DEADLINES } from "../fault/verb.js";
import { parseDurationMs } from "../util/duration.js";
import { consoleProgress, type Progress } from "../util/progress.js";
import { sleep } from "../util/time.js";
import {
  OUTPUT_OPTION,
  OUTPUT_USAGE,
  outputFormat,
  parseCount,
  writeJson,
  type OutputFormat,
} from "./args.js";
import { faultJson } from "./fault-json.js";
import { notice } from "./notice.js";
import {
  openVerbCluster,
  VERB_CLUSTER_OPTIONS,
  VERB_CLUSTER_USAGE,
  type VerbClusterValues,
} from "./verb-cluster.js";

export const NODE_VERBS = ["stop", "start", "partition", "heal", "pressure"] as const;
type NodeVerb = (typeof NODE_VERBS)[number];
const APPLY_VERBS: readonly NodeVerb[] = ["stop", "partition", "pressure"];
const PRESSURE_KINDS: readonly PressureKind[] = ["memory", "disk"];
/** What each ending verb reverts. */
const ENDS: Partial<Record<NodeVerb, FaultKind[]>> = {
  start: ["stop", "graceful-shutdown"],
  heal: ["partition", "pressure"],
};

export const NODE_USAGE = `rekindle node stop|partition|pressure <node> [--for D] [--kind memory|disk] [cluster options] ${OUTPUT_USAGE}
      node loss, partition, or memory/disk pressure (--kind, default memory) on one worker, left in
      place after the command ends; journalled in the cluster (namespace rekindle-journal) with a
      deadline --for from now (default 1h; 30s to 1h): \`rekindle reap\` reverts it once that has
      passed (on an existing cluster the node agent does, by itself); prints the fault's id
      (-o json: {verb, node, fault: {id, runId, action, nodes, appliedAt, deadline, command}})
rekindle node start|heal <node> [cluster options] ${OUTPUT_USAGE}
      end the node's journalled faults and remove their records: start ends stop (and graceful
      shutdown), heal ends partition and pressure; with no record, start/heal the node all the same
      (-o json: {verb, node, ended: [fault], left: [fault and reason], direct: no record, acted directly})
      cluster options: ${VERB_CLUSTER_USAGE}
      existing: node faults go through rekindle's node agent and need --allow-faults; the node named
      is the one allowed (never a control-plane node), and at most --max-faulted-nodes (default 1)
      nodes are faulted at once across the cluster's fault journal
      sim pressure: the sim's eviction manager runs in this process, so the fault is held in the
      foreground for --for (Ctrl-C ends it early)`;

const OPTIONS = {
  ...VERB_CLUSTER_OPTIONS,
  for: { type: "string" },
  kind: { type: "string" },
  "allow-faults": { type: "boolean", default: false },
  "max-faulted-nodes": { type: "string" },
  ...OUTPUT_OPTION,
} as const;

interface NodeCommand {
  verb: NodeVerb;
  node: string;
  action: FaultAction | undefined;
  forMs: number;
  maxNodes: number | undefined;
  format: OutputFormat;
}

/** Every argument checked before any cluster is reached; a typo names what is valid. */
function parseNodeCommand(args: string[]): {
  command: NodeCommand;
  values: VerbClusterValues & Record<string, unknown>;
} {
  const { values, positionals } = parseOptions({
    args,
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  const format = outputFormat(values.output);
  const [verbText, node, ...extra] = positionals;
  if (!(NODE_VERBS as readonly string[]).includes(verbText ?? ""))
    throw RekindleError.invalidInput("node verb", verbText ?? "", NODE_VERBS);
  const verb = verbText as NodeVerb;
  if (node === undefined || extra.length > 0 || parseNodeNames(node).length !== 1)
    throw new RekindleError("INVALID_INPUT", `rekindle node ${verb} takes exactly one node name`, {
      hint: `e.g. rekindle node ${verb} worker-1`,
    });
  const applies = APPLY_VERBS.includes(verb);
  if (!applies && values.for !== undefined)
    throw new RekindleError("INVALID_INPUT", `rekindle node ${verb} takes no --for`, {
      hint: "--for sets how long a stop, partition or pressure lasts at most",
    });
  if (verb !== "pressure" && values.kind !== undefined)
    throw new RekindleError("INVALID_INPUT", "--kind is for rekindle node pressure");
  if (values.kind !== undefined && !(PRESSURE_KINDS as readonly string[]).includes(values.kind))
    throw RekindleError.invalidInput("pressure kind", values.kind, PRESSURE_KINDS);
  const forMs = values.for === undefined ? VERB_DEADLINES.defaultMs : parseDurationMs(values.for, "--for");
  checkVerbDeadline(forMs);
  const action: FaultAction | undefined = !applies
    ? undefined
    : verb === "pressure"
      ? { kind: "pressure", pressure: (values.kind ?? "memory") as PressureKind }
      : { kind: verb as "stop" | "partition" };
  const max = values["max-faulted-nodes"];
  const maxNodes = max === undefined ? undefined : parseCount("--max-faulted-nodes", max);
  return { command: { verb, node, action, forMs, maxNodes, format }, values };
}

function checkExistingFlags(
  provider: ProviderName,
  command: NodeCommand,
  values: Record<string, unknown>,
): void {
  const railsFlags = ["allow-faults", "max-faulted-nodes"].filter(
    (f) => values[f] !== undefined && values[f] !== false,
  );
  if (provider !== "existing") {
    if (railsFlags.length > 0)
      throw new RekindleError("INVALID_INPUT", `--${railsFlags.join(", --")} is for --provider existing`, {
        hint: "rekindle's own clusters (sim, kind) take node faults without it",
      });
    return;
  }
  if (command.action !== undefined && values["allow-faults"] !== true)
    throw new RekindleError(
      "INVALID_INPUT",
      `rekindle node ${command.verb} on a cluster rekindle did not create needs --allow-faults`,
      {
        hint: `rekindle node ${command.verb} ${command.node} --provider existing --allow-faults`,
      },
    );
}

/** Across the journal, the nodes faulted now plus this one stay within --max-faulted-nodes. */
async function checkMaxAcrossJournal(journal: FaultJournal, node: string, maxNodes: number): Promise<void> {
  const { records } = await journal.list();
  const hit = new Set(
    records.flatMap((r) => r.nodes.filter((n) => n.state !== "reverted").map((n) => n.name)),
  );
  hit.add(node);
  if (hit.size > maxNodes)
    throw new RekindleError(
      "INVALID_INPUT",
      `faulting ${node} would make ${hit.size} nodes faulted at once (${[...hit].sort().join(", ")}), more than --max-faulted-nodes ${maxNodes}`,
      { hint: "end a fault first (rekindle node start|heal <node>), or raise --max-faulted-nodes" },
    );
}

async function applyVerb(
  cluster: ClusterUnderTest,
  journal: FaultJournal,
  command: NodeCommand & { action: FaultAction },
  progress: Progress,
  signal: AbortSignal,
  again: string,
): Promise<number> {
  const { node, action, forMs } = command;
  const workers = await cluster.workerNodes();
  if (!workers.includes(node)) throw RekindleError.invalidInput("node", node, workers);
  if (cluster.faultRails !== undefined) await checkMaxAcrossJournal(journal, node, command.maxNodes ?? 1);
  const until = new Date(Date.now() + forMs).toISOString();
  progress.info(
    `preflight: ${describeAction(action)} of ${node} (and no other node) on ${cluster.description}, until ${until} at the latest`,
  );
  const record = await leaveFault({
    cluster,
    journal,
    action,
    node,
    deadlineMs: forMs,
    command: `rekindle node ${command.verb}`,
    progress,
  });
  if (command.format === "json") writeJson({ verb: command.verb, node, fault: faultJson(record) });
  else process.stdout.write(`${record.id}\n`);
  if (cluster.provider === "sim" && action.kind === "pressure")
    return holdSimPressure(cluster, journal, node, forMs, signal);
  const end = action.kind === "stop" ? "start" : "heal";
  notice(
    `node ${node}: ${describeAction(action)} until ${record.deadline} (its journal record ${record.id}); end it with: rekindle node ${end} ${node} ${again}`,
  );
  return 0;
}

/** The sim's eviction manager lives in this process: hold the pressure until --for or Ctrl-C, then end it. */
async function holdSimPressure(
  cluster: ClusterUnderTest,
  journal: FaultJournal,
  node: string,
  forMs: number,
  signal: AbortSignal,
): Promise<number> {
  notice(`node ${node}: pressure held for ${forMs / 1000}s (Ctrl-C ends it early)`);
  let code = 0;
  try {
    await sleep(forMs, signal);
  } catch (error) {
    if (!signal.aborted) throw error;
    code = 130;
  } finally {
    await endNodeFaults({ cluster, journal, node, kinds: ["pressure"] });
  }
  notice(`node ${node}: pressure relieved`);
  return code;
}

async function endVerb(
  cluster: ClusterUnderTest,
  journal: FaultJournal,
  command: NodeCommand,
  progress: Progress,
): Promise<number> {
  const kinds = ENDS[command.verb] ?? [];
  // kind: reverted from the record alone, as reap does (a pressure's shrunk node is in the record's
  // node, not in this process).
  const reconnect = reconnectFromLocator(progress);
  const { ended, left } = await endNodeFaults({
    cluster,
    journal,
    node: command.node,
    kinds,
    progress,
    ...(cluster.provider === "kind"
      ? { actuatorFor: (r: FaultRecord) => reconnect(r.locator, r.action) }
      : {}),
  });
  for (const record of ended) notice(`ended ${describeRecord(record)}`);
  for (const { record, reason } of left) notice(`left ${describeRecord(record)}: ${reason}`);
  const direct = ended.length === 0 && left.length === 0 && cluster.provider !== "existing";
  if (ended.length === 0 && left.length === 0) {
    notice(
      direct
        ? `node ${command.node}: no journalled fault; ${command.verb === "start" ? "starting" : "healing"} it all the same`
        : `node ${command.node}: no journalled ${kinds.join(" or ")} fault to end`,
    );
    if (direct) await startOrHeal(cluster, command);
  }
  if (command.format === "json")
    writeJson({
      verb: command.verb,
      node: command.node,
      ended: ended.map(faultJson),
      left: left.map(({ record, reason }) => ({ ...faultJson(record), reason })),
      direct,
    });
  return left.length > 0 ? 1 : 0;
}

/** The flags that name this cluster again, for the hint that ends the fault. */
function sameCluster(provider: ProviderName, values: VerbClusterValues): string {
  const flags = [`--provider ${provider}`];
  if (provider !== "existing" && values.name !== "rekindle") flags.push(`--name ${values.name}`);
  if (provider === "existing" && values.kubeconfig !== undefined)
    flags.push(`--kubeconfig ${values.kubeconfig}`);
  if (provider === "existing" && values.context !== undefined) flags.push(`--context ${values.context}`);
  return flags.join(" ");
}

/** With no record: start or heal the node directly; the sim's own methods refuse a node not stopped or partitioned. */
async function startOrHeal(cluster: ClusterUnderTest, command: NodeCommand): Promise<void> {
  const sim = cluster instanceof SimClusterUnderTest ? cluster.cluster : undefined;
  if (command.verb === "start") await (sim ?? cluster.capabilities.lifecycle)?.startNode(command.node);
  else if (sim) await sim.healNode(command.node);
  else await cluster.capabilities.partition?.healNode(command.node);
}

export async function nodeCommand(args: string[], signal: AbortSignal): Promise<number> {
  const { command, values } = parseNodeCommand(args);
  const progress = consoleProgress();
  const provider = await chooseProvider(values.provider, progress);
  checkExistingFlags(provider, command, values);
  // The node named is the one the rails allow (ending a fault needs no opt-in).
  const rails =
    provider === "existing"
      ? {
          allowFaults: true,
          nodes: [command.node],
          chosenBy: `the node named (${command.node})`,
          ...(command.maxNodes !== undefined ? { maxNodes: command.maxNodes } : {}),
        }
      : undefined;
  const cluster = await openVerbCluster(provider, values, { progress, signal, ...(rails ? { rails } : {}) });
  try {
    const journal = ConfigMapJournal.forCluster(cluster.kubeConfig());
    const { action } = command;
    return action !== undefined
      ? await applyVerb(
          cluster,
          journal,
          { ...command, action },
          progress,
          signal,
          sameCluster(provider, values),
        )
      : await endVerb(cluster, journal, command, progress);
  } finally {
    // Not kind's: on a reused cluster it restores the nodes this process shrank, i.e. it would lift
    // the pressure just left in place. An attached kind cluster holds nothing else to release.
    if (cluster.provider !== "kind") await cluster.destroy();
  }
}
