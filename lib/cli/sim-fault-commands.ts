// `rekindle sim node …` and `rekindle sim apiserver …`: faults on a running sim cluster. Every
// argument is checked before the cluster is opened, so a typo fails fast and names what is valid.
import { parseOptions } from "../util/parse-options.js";
import { RekindleError } from "../errors.js";
import { nodeCommand } from "./node-verbs.js";
import { notice } from "./notice.js";
import { OUTPUT_OPTION, OUTPUT_USAGE, outputFormat, writeJson } from "./args.js";
import { SimCluster } from "../cluster/sim/cluster.js";
import { validatePauseMs } from "../cluster/sim/hostile/apiserver-pause.js";
import { formatOffset, validateClockSkew } from "../cluster/sim/hostile/clock-webhook.js";
import { parseDurationMs, parseSignedDurationMs } from "../util/duration.js";
import { consoleProgress } from "../util/progress.js";
import { sleep } from "../util/time.js";

export const NODE_ACTIONS = ["stop", "start", "partition", "heal", "clock", "reregister"] as const;
type NodeAction = (typeof NODE_ACTIONS)[number];
export const APISERVER_ACTIONS = ["pause", "resume"] as const;
type ApiserverAction = (typeof APISERVER_ACTIONS)[number];

export const SIM_NODE_USAGE = `rekindle sim node ${NODE_ACTIONS.slice(0, 4).join("|")} <node> [--name X] ${OUTPUT_USAGE}
      node loss (SIGKILL of its kwok), return, partition (SIGSTOP), heal: an alias of
      rekindle node … --provider sim (journalled; a stop or partition is due within 1h; -o as its)
rekindle sim node clock <node> --offset D [--step] [--for D] [--name X]
      skew the node's kubelet clock: its Lease renewTime and heartbeats are written D off (-30s
      behind, +30s ahead, 0 true again); slewed so renewTime never goes back, or stepped at once
      with --step; kept until changed, or with --for held in the foreground that long (Ctrl-C ends it)
rekindle sim node reregister <node> [--name X] ${OUTPUT_USAGE}
      delete the node's Node object and register it again (same name, new UID); prints the new UID
      (-o json: {node, oldUid, newUid})`;

export const SIM_APISERVER_USAGE = `rekindle sim apiserver pause --for D [--name X]
      freeze kube-apiserver (SIGSTOP) for D, in the foreground; Ctrl-C continues it at once
rekindle sim apiserver resume [--name X]
      continue a kube-apiserver whose pause was killed before it ended`;

const OPTIONS = {
  name: { type: "string", default: "rekindle" },
  offset: { type: "string" },
  step: { type: "boolean", default: false },
  for: { type: "string" },
  ...OUTPUT_OPTION,
} as const;

/** Which flags beyond --name each action takes. */
const NODE_FLAGS: Readonly<Record<NodeAction, readonly string[]>> = {
  stop: ["output"],
  start: ["output"],
  partition: ["output"],
  heal: ["output"],
  clock: ["offset", "step", "for"],
  reregister: ["output"],
};

function rejectFlags(
  command: string,
  given: Readonly<Record<string, unknown>>,
  allowed: readonly string[],
): void {
  const extra = Object.entries(given)
    .filter(([flag, value]) => flag !== "name" && value !== undefined && value !== false)
    .map(([flag]) => flag)
    .filter((flag) => !allowed.includes(flag));
  if (extra.length > 0) {
    throw new RekindleError(
      "INVALID_INPUT",
      `rekindle sim ${command} takes no ${extra.map((f) => `--${f}`).join(", ")}`,
      {
        hint:
          allowed.length > 0
            ? `it takes ${allowed.map((f) => `--${f}`).join(", ")} and --name`
            : "it takes only --name",
      },
    );
  }
}

/**
 * `--offset -30s` as `--offset=-30s`: node's parseArgs refuses an option value that starts with a
 * dash, and a clock behind is the usual case.
 */
export function joinNegativeOffset(args: readonly string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const value = args[i + 1];
    if (args[i] === "--offset" && value !== undefined && /^-\d/.test(value)) {
      joined.push(`--offset=${value}`);
      i++;
    } else {
      joined.push(args[i] ?? "");
    }
  }
  return joined;
}

export async function simNode(args: string[], signal: AbortSignal): Promise<number> {
  const { values, positionals } = parseOptions({
    args: joinNegativeOffset(args),
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  const [actionText, nodeName, ...extra] = positionals;
  if (!(NODE_ACTIONS as readonly string[]).includes(actionText ?? ""))
    throw RekindleError.invalidInput("node action", actionText ?? "", NODE_ACTIONS);
  const action = actionText as NodeAction;
  rejectFlags(`node ${action}`, values, NODE_FLAGS[action]);
  const format = outputFormat(values.output);
  const clock = action === "clock" ? clockArguments(values) : undefined;
  const cluster = SimCluster.open(values.name, consoleProgress());
  if (nodeName === undefined || extra.length > 0) {
    throw new RekindleError("INVALID_INPUT", `rekindle sim node ${action} takes exactly one node name`, {
      hint: `nodes of cluster "${cluster.name}": ${cluster.nodeNames().join(", ")}`,
    });
  }
  switch (action) {
    case "stop":
    case "start":
    case "partition":
    case "heal":
      // An alias of `rekindle node …` on the sim: through the fault layer, journalled.
      return nodeCommand(
        [action, nodeName, "--provider", "sim", "--name", values.name, "-o", format],
        signal,
      );
    case "reregister": {
      const { oldUid, newUid } = await cluster.reregisterNode(nodeName, signal);
      if (format === "json") writeJson({ node: nodeName, oldUid, newUid });
      else process.stdout.write(`${newUid}\n`);
      notice(`node ${nodeName} re-registered: UID ${oldUid} → ${newUid}`);
      break;
    }
    case "clock":
      if (clock) return skewClock(cluster, nodeName, clock, signal);
      break;
  }
  return 0;
}

/**
 * Runs a fault held in the foreground until it ends or Ctrl-C aborts `signal` (its own cleanup
 * undoes it either way): 0 when it ran its course, 130 when interrupted, saying what was undone.
 */
async function heldInForeground(
  hold: () => Promise<void>,
  signal: AbortSignal,
  undone: string,
): Promise<number> {
  try {
    await hold();
    return 0;
  } catch (error) {
    if (!signal.aborted) throw error;
    process.stderr.write(`interrupted: ${undone}\n`);
    return 130;
  }
}

interface ClockArguments {
  offsetMs: number;
  step: boolean;
  /** Hold the skew this long in the foreground, then clear it. */
  forMs: number | undefined;
}

function clockArguments(values: { offset?: string; step?: boolean; for?: string }): ClockArguments {
  if (values.offset === undefined) {
    throw new RekindleError("INVALID_INPUT", "rekindle sim node clock needs --offset", {
      hint: "e.g. --offset -30s (behind), --offset +30s (ahead), --offset 0 (true again)",
    });
  }
  const offsetMs = parseSignedDurationMs(values.offset, "--offset");
  validateClockSkew({ offsetMs, step: false });
  const forMs = values.for === undefined ? undefined : parseDurationMs(values.for, "--for");
  if (forMs !== undefined && (forMs <= 0 || offsetMs === 0)) {
    throw new RekindleError("INVALID_INPUT", "--for needs a non-zero --offset and a duration above 0", {
      hint: "e.g. --offset -30s --for 2m",
    });
  }
  return { offsetMs, step: values.step === true, forMs };
}

async function skewClock(
  cluster: SimCluster,
  node: string,
  args: ClockArguments,
  signal: AbortSignal,
): Promise<number> {
  await cluster.setClockSkew(node, { offsetMs: args.offsetMs, step: args.step }, signal);
  const { forMs } = args;
  if (forMs === undefined) {
    if (args.offsetMs !== 0) {
      notice(
        `node ${node}: clock ${formatOffset(args.offsetMs)} until changed; clear it with: rekindle sim node clock ${node} --offset 0 --name ${cluster.name}`,
      );
    }
    return 0;
  }
  notice(`node ${node}: clock ${formatOffset(args.offsetMs)} for ${forMs / 1000}s (Ctrl-C ends it early)`);
  return heldInForeground(
    async () => {
      try {
        await sleep(forMs, signal);
      } finally {
        await cluster.setClockSkew(node, undefined);
      }
    },
    signal,
    `node ${node}'s clock is true again`,
  );
}

export async function simApiserver(args: string[], signal: AbortSignal): Promise<number> {
  const { values, positionals } = parseOptions({
    args,
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  const [actionText, ...extra] = positionals;
  if (!(APISERVER_ACTIONS as readonly string[]).includes(actionText ?? ""))
    throw RekindleError.invalidInput("apiserver action", actionText ?? "", APISERVER_ACTIONS);
  const action = actionText as ApiserverAction;
  if (extra.length > 0) {
    throw new RekindleError("INVALID_INPUT", `rekindle sim apiserver ${action} takes no ${extra.join(" ")}`);
  }
  rejectFlags(`apiserver ${action}`, values, action === "pause" ? ["for"] : []);
  if (action === "pause") {
    if (values.for === undefined) {
      throw new RekindleError("INVALID_INPUT", "rekindle sim apiserver pause needs --for", {
        hint: "e.g. --for 30s (at most 1h)",
      });
    }
    const forMs = parseDurationMs(values.for, "--for");
    validatePauseMs(forMs);
    const cluster = SimCluster.open(values.name, consoleProgress());
    return heldInForeground(
      () => cluster.pauseApiServer(forMs, signal),
      signal,
      "kube-apiserver continued (SIGCONT)",
    );
  }
  const resumed = SimCluster.open(values.name, consoleProgress()).resumeApiServer();
  if (!resumed) notice("kube-apiserver was not paused (sent SIGCONT all the same)");
  return 0;
}
