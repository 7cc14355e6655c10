// The `rekindle` command: dispatches to subcommands, turns errors into clear messages and exit codes
// (0 success, 1 failure, 2 bad input, 3 the harness or its infrastructure failed, 130
// interrupted: exit-codes.ts).
import { errorMessage, isApiError, RekindleError } from "../errors.js";
import { interruptScope } from "../util/cleanup.js";
import { isParseArgsError } from "./args.js";
import { exitCodeForError } from "./exit-codes.js";

// Subcommands are imported when run: the in-cluster controller (`rekindle controller`) then loads
// the controller and its drivers, not the sim runtime, the suites or the report writers.
const commands = {
  run: () => import("./run-commands.js"),
  sim: () => import("./sim-commands.js"),
  controller: () => import("./controller-command.js"),
  kind: () => import("./kind-commands.js"),
};

/**
 * A subcommand's usage text, or a line saying why its module cannot load: the controller image
 * has production dependencies only (no mocha for `run`), and its `--help` must still answer.
 */
async function usageOf(name: string, load: () => Promise<string>): Promise<string> {
  try {
    return await load();
  } catch (error) {
    return `rekindle ${name} …: not available in this installation (${errorMessage(error)})`;
  }
}

export async function usage(): Promise<string> {
  const [RUN_USAGE, CONTROLLER_USAGE, SIM_USAGE, KIND_USAGE] = await Promise.all([
    usageOf("run", async () => (await commands.run()).RUN_USAGE),
    usageOf("controller", async () => (await commands.controller()).CONTROLLER_USAGE),
    usageOf("sim", async () => (await commands.sim()).SIM_USAGE),
    usageOf("kind", async () => (await commands.kind()).KIND_USAGE),
  ]);
  return `rekindle: chaos-testing and conformance harness for Kubernetes node loss

usage: rekindle <command> [options]

  run          the node-loss conformance suites, with reports
  list         scenarios and their expected timelines
  compare      compare two runs' summary.json; non-zero on a regression
  controller   the bundled recovery controller
  sim …        build and run a local sim cluster (real control plane, KWOK workers)
  kind …       rekindle's offline kind node image and controller image
  help         this text

${RUN_USAGE}

${CONTROLLER_USAGE}

${SIM_USAGE}

${KIND_USAGE}`;
}

/** How long Ctrl-C waits for the command to undo its work (a scenario's undo restarts nodes, lifts taints). */
const INTERRUPT_CLEANUP_BUDGET_MS = 300_000;

export async function main(argv: string[]): Promise<number> {
  const [command] = argv;
  // Ctrl-C/SIGTERM aborts this signal; the command undoes what it started, and its own exit code
  // is the process's (130 for an interrupted run, 0 for a controller told to stop).
  using interrupt = interruptScope(`rekindle ${command ?? ""}`.trim(), {
    budgetMs: INTERRUPT_CLEANUP_BUDGET_MS,
  });
  const code = await dispatch(argv, interrupt.signal);
  interrupt.settle(code);
  return code;
}

async function dispatch(argv: string[], signal: AbortSignal): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "sim":
        return await (await commands.sim()).simCommand(rest, signal);
      case "run":
        return await (await commands.run()).runCommandLine(rest, signal);
      case "list":
        return (await commands.run()).listCommand(rest);
      case "compare":
        return (await commands.run()).compareCommand(rest);
      case "controller":
        return await (await commands.controller()).controllerCommand(rest, signal);
      case "kind":
        return await (await commands.kind()).kindCommand(rest, signal);
      case "help":
      case "--help":
      case "-h":
        process.stdout.write(`${await usage()}\n`);
        return 0;
      case undefined:
        process.stderr.write(`${await usage()}\n`);
        return 2;
      default:
        throw RekindleError.invalidInput("command", command, [
          "run",
          "list",
          "compare",
          "controller",
          "sim",
          "kind",
          "help",
        ]);
    }
  } catch (error) {
    if (isParseArgsError(error)) {
      process.stderr.write(
        `error [INVALID_INPUT]: ${error.message}\n  see: rekindle ${command ?? ""} --help\n`,
      );
      return 2;
    }
    if (error instanceof RekindleError) {
      process.stderr.write(`${error.describe()}\n`);
      return exitCodeForError(error);
    }
    if (isApiError(error)) {
      // The API's own words in one line (its Status), not client-node's dump of every header.
      process.stderr.write(`error [API]: ${errorMessage(error)}\n`);
      return 1;
    }
    process.stderr.write(
      `rekindle: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return 1;
  }
}
