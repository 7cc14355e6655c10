// The table of rekindle's commands: each entry's words, one-line summary, usage text and handler.
// The dispatcher (dispatch.ts) consults it alone, so a new command is one entry here, and -h/--help
// answers for every entry and subcommand without code of its own.
//
// Parsing stays on node:util parseArgs (no CLI library). commander or yargs would replace only the
// option declarations each command already makes in a few lines; the usage texts would still be
// hand-written (they carry defaults, bounds and pinned versions a generated help cannot say), and
// rewriting eight commands' parsing onto another library's model (with commander's own exit paths
// and help output) would risk their checked error messages for no fewer lines. What parseArgs lacks,
// the table gives: help on every command, one place that lists commands, and errors naming the path.
import type { CommandSpec } from "./dispatch.js";
import { resolveCommand, unknownWord, walkCommands, usageText } from "./dispatch.js";
import { exitCodeLines } from "./exit-codes.js";
import { GLOBAL_FLAGS_USAGE } from "./global-flags.js";

// Modules are imported when their command runs or its usage is asked for: the in-cluster controller
// then loads the controller and its drivers, not the sim runtime, the suites or the report writers.
const compareModule = () => import("./compare-commands.js");
const runModule = () => import("./run-commands.js");
const mergeModule = () => import("./merge-command.js");
const simModule = () => import("./sim-commands.js");
const simFaultModule = () => import("./sim-fault-commands.js");
const kindModule = () => import("./kind-commands.js");
const controllerModule = () => import("./controller-command.js");
const versionModule = () => import("./version-command.js");
const reapModule = () => import("./reap-command.js");
const nodeModule = () => import("./node-verbs.js");
const upDownModule = () => import("./up-down.js");
const agentModule = () => import("./agent-command.js");
const proxyModule = () => import("./proxy-commands.js");

const AGENT_SUBCOMMANDS: readonly CommandSpec[] = [
  {
    name: "install",
    summary: "install rekindle's node agent (a privileged DaemonSet) and wait until it is Ready",
    usage: async () => (await agentModule()).AGENT_INSTALL_USAGE,
    run: async (args, signal) => (await agentModule()).agentInstall(args, signal),
  },
  {
    name: "uninstall",
    summary: "revert what the agents hold and remove them",
    usage: async () => (await agentModule()).AGENT_UNINSTALL_USAGE,
    run: async (args, signal) => (await agentModule()).agentUninstall(args, signal),
  },
];

const PROXY_SUBCOMMANDS: readonly CommandSpec[] = [
  {
    name: "start",
    summary: "run the API fault proxy in the foreground",
    usage: async () => (await proxyModule()).PROXY_START_USAGE,
    run: async (args, signal) => (await proxyModule()).proxyStart(args, signal),
  },
  {
    name: "set",
    summary: "replace the running proxy's fault rules",
    usage: async () => (await proxyModule()).PROXY_SET_USAGE,
    run: async (args) => (await proxyModule()).proxySet(args),
  },
  {
    name: "clear",
    summary: "remove every fault rule",
    usage: async () => (await proxyModule()).PROXY_CLEAR_USAGE,
    run: async (args) => (await proxyModule()).proxyClear(args),
  },
  {
    name: "status",
    summary: "the proxy's rules, open streams and counters",
    usage: async () => (await proxyModule()).PROXY_STATUS_USAGE,
    run: async (args) => (await proxyModule()).proxyStatusCommand(args),
  },
];

const SIM_SUBCOMMANDS: readonly CommandSpec[] = [
  {
    name: "build",
    summary: "build the pinned sim binaries",
    usage: async () => (await simModule()).SIM_BUILD_USAGE,
    run: async (args, signal) => (await simModule()).simBuild(args, signal),
  },
  {
    name: "up",
    summary: "start a sim cluster in the background",
    usage: async () => (await simModule()).SIM_UP_USAGE,
    run: async (args, signal) => (await simModule()).simUp(args, signal),
  },
  {
    name: "status",
    summary: "components and nodes of a running sim cluster",
    usage: async () => (await simModule()).SIM_STATUS_USAGE,
    run: async (args) => (await simModule()).simStatus(args),
  },
  {
    name: "down",
    summary: "stop a sim cluster",
    usage: async () => (await simModule()).SIM_DOWN_USAGE,
    run: async (args) => (await simModule()).simDown(args),
  },
  {
    name: "node",
    summary: "a node fault: stop, start, partition, heal, clock, reregister",
    usage: async () => (await simFaultModule()).SIM_NODE_USAGE,
    run: async (args, signal) => (await simFaultModule()).simNode(args, signal),
  },
  {
    name: "apiserver",
    summary: "pause or resume kube-apiserver",
    usage: async () => (await simFaultModule()).SIM_APISERVER_USAGE,
    run: async (args, signal) => (await simFaultModule()).simApiserver(args, signal),
  },
];

const KIND_SUBCOMMANDS: readonly CommandSpec[] = [
  {
    name: "build-image",
    summary: "build rekindle's offline kind node image",
    usage: async () => (await kindModule()).KIND_BUILD_IMAGE_USAGE,
    run: async (args, signal) => (await kindModule()).buildImage(args, signal),
  },
  {
    name: "build-controller-image",
    summary: "build the in-cluster controller image",
    usage: async () => (await kindModule()).KIND_BUILD_CONTROLLER_IMAGE_USAGE,
    run: async (args, signal) => (await kindModule()).buildControllerImage(args, signal),
  },
];

export const HELP_USAGE = `rekindle help [<command> [<subcommand>]]
      the list of commands, or the full usage of the command named (as rekindle <command> --help)`;

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: "run",
    summary: "the node-loss conformance suites, with reports",
    usage: async () => (await runModule()).RUN_USAGE,
    run: async (args, signal) => (await runModule()).runCommandLine(args, signal),
  },
  {
    name: "list",
    summary: "scenarios and their expected timelines",
    usage: async () => (await runModule()).LIST_USAGE,
    run: async (args) => (await runModule()).listCommand(args),
  },
  {
    name: "merge",
    summary: "join the summaries of a CI matrix's shards (run --shard k/n) into one run's reports",
    usage: async () => (await mergeModule()).MERGE_USAGE,
    run: async (args) => (await mergeModule()).mergeCommand(args),
  },
  {
    name: "compare",
    summary: "compare two runs' summary.json; non-zero on a regression",
    usage: async () => (await compareModule()).COMPARE_USAGE,
    run: async (args) => (await compareModule()).compareCommand(args),
  },
  {
    name: "trend",
    summary: "an HTML/SVG trend of each scenario's milestones across runs",
    usage: async () => (await compareModule()).TREND_USAGE,
    run: async (args) => (await compareModule()).trendCommand(args),
  },
  {
    name: "up",
    summary: "bring a cluster up for local reproduction (sim, kind; existing: checked)",
    usage: async () => (await upDownModule()).UP_USAGE,
    run: async (args, signal) => (await upDownModule()).upCommand(args, signal),
  },
  {
    name: "node",
    summary: "a node fault left in place: stop, start, partition, heal, pressure (any provider)",
    usage: async () => (await nodeModule()).NODE_USAGE,
    run: async (args, signal) => (await nodeModule()).nodeCommand(args, signal),
  },
  {
    name: "down",
    summary: "take the cluster down (existing: end rekindle's faults, leave the cluster)",
    usage: async () => (await upDownModule()).DOWN_USAGE,
    run: async (args, signal) => (await upDownModule()).downCommand(args, signal),
  },
  {
    name: "reap",
    summary: "revert the node faults a dead run left (from the cluster's fault journal)",
    usage: async () => (await reapModule()).REAP_USAGE,
    run: async (args) => (await reapModule()).reapCommand(args),
  },
  {
    name: "agent",
    summary: "rekindle's node agent for node faults on clusters rekindle did not create",
    usage: async () => (await agentModule()).AGENT_USAGE,
    subcommands: AGENT_SUBCOMMANDS,
  },
  {
    name: "proxy",
    summary:
      "an API fault proxy between any controller and kube-apiserver (stalled, bookmark-only, closed watches…)",
    usage: async () => (await proxyModule()).PROXY_USAGE,
    subcommands: PROXY_SUBCOMMANDS,
  },
  {
    name: "controller",
    summary: "the bundled recovery controller",
    usage: async () => (await controllerModule()).CONTROLLER_USAGE,
    run: async (args, signal) => (await controllerModule()).controllerCommand(args, signal),
  },
  {
    name: "sim",
    summary: "build and run a local sim cluster (real control plane, KWOK workers)",
    usage: async () => (await simModule()).SIM_USAGE,
    subcommands: SIM_SUBCOMMANDS,
  },
  {
    name: "kind",
    summary: "rekindle's offline kind node image and controller image",
    usage: async () => (await kindModule()).KIND_USAGE,
    subcommands: KIND_SUBCOMMANDS,
  },
  {
    name: "version",
    aliases: ["--version", "-V"],
    summary: "rekindle's version and git sha, and the versions it pins",
    usage: async () => (await versionModule()).VERSION_USAGE,
    run: async (args) => (await versionModule()).versionCommand(args),
  },
  {
    name: "help",
    summary: "this text, or a command's full usage (help <command> [<sub>])",
    usage: () => HELP_USAGE,
    run: helpCommand,
  },
];

/**
 * `rekindle help [<command>...]`: the usage of the command the words name, else of rekindle. Words
 * after a command that has no subcommands are its own (`help node stop` is node's usage).
 */
async function helpCommand(args: string[]): Promise<number> {
  if (args.length === 0) {
    process.stdout.write(`${await rekindleUsage()}\n`);
    return 0;
  }
  const commands = walkCommands(COMMANDS);
  const { path, spec } = resolveCommand(COMMANDS, args);
  const leaf = spec !== undefined && (spec.subcommands ?? []).length === 0;
  const named =
    commands.find((c) => c.path.join(" ") === args.join(" ")) ??
    (leaf ? commands.find((c) => c.path.join(" ") === path.join(" ")) : undefined);
  if (named === undefined)
    throw unknownWord(
      "command",
      args.join(" "),
      commands.map(({ path }) => path.join(" ")),
    );
  process.stdout.write(`${await usageText(named.spec, named.path)}\n`);
  return 0;
}

/** The usage of rekindle itself, one screen: its commands, the global flags, the exit codes, the docs. */
export function rekindleUsage(): Promise<string> {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 3;
  const list = COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`).join("\n");
  return Promise.resolve(`rekindle: chaos-testing and conformance harness for Kubernetes node loss

usage: rekindle <command> [options]     rekindle help <command> [<sub>]     rekindle <command> --help

commands:
${list}

global options:
${GLOBAL_FLAGS_USAGE}

exit codes:
${exitCodeLines().join("\n")}

docs, in rekindle's checkout: docs/user.md (using it), docs/scenarios.md, docs/controller.md`);
}
