// The mechanism behind the command table: picks the (sub)command the words name, answers -h/--help
// for every entry before its own parsing runs, and refuses an unknown word naming the valid ones.
import { errorMessage, RekindleError } from "../errors.js";
import { didYouMean } from "../util/did-you-mean.js";
import { USAGE_ERROR } from "../util/parse-options.js";

export interface CommandSpec {
  /** The word that selects it after its parent's words. */
  name: string;
  /** Other words that select it (`--version` for `version`); not listed as commands. */
  aliases?: readonly string[];
  /** One line for its parent's list of commands. */
  summary: string;
  /** Its usage text; loaded on demand, as its module may be heavy. */
  usage: () => string | Promise<string>;
  /** Runs it with the arguments after its words. Absent on a group, whose next word picks a subcommand. */
  run?: (args: string[], signal: AbortSignal) => number | Promise<number>;
  subcommands?: readonly CommandSpec[];
}

export interface ResolvedCommand {
  /** The words that named it, e.g. ["sim", "up"]; empty for rekindle itself. */
  path: string[];
  /** Undefined when no word named a command (rekindle itself). */
  spec: CommandSpec | undefined;
  /** The arguments after its words. */
  rest: string[];
}

const HELP_FLAGS = ["-h", "--help"];

/** -h or --help anywhere before a `--` that ends the options. */
export function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).some((arg) => HELP_FLAGS.includes(arg));
}

function selects(spec: CommandSpec, word: string | undefined): boolean {
  return word !== undefined && (spec.name === word || (spec.aliases ?? []).includes(word));
}

/** Follows the words of `argv` down the table as far as they name commands. */
export function resolveCommand(table: readonly CommandSpec[], argv: readonly string[]): ResolvedCommand {
  const path: string[] = [];
  let spec: CommandSpec | undefined;
  let choices = table;
  let rest = [...argv];
  for (;;) {
    const word = rest[0];
    const next = choices.find((c) => selects(c, word));
    if (next === undefined || word === undefined) break;
    spec = next;
    path.push(next.name);
    rest = rest.slice(1);
    choices = next.subcommands ?? [];
  }
  return { path, spec, rest };
}

/** The usage text of `spec`, or a line saying why its module cannot load in this installation. */
export async function usageText(spec: CommandSpec, path: readonly string[]): Promise<string> {
  try {
    return await spec.usage();
  } catch (error) {
    // The controller image has production dependencies only: its --help must answer all the same.
    return `rekindle ${path.join(" ")} …: not available in this installation (${errorMessage(error)})`;
  }
}

/** Every entry of `table` with its words, depth first (for the help of rekindle itself, and tests). */
export function walkCommands(
  table: readonly CommandSpec[],
  parent: readonly string[] = [],
): { path: string[]; spec: CommandSpec }[] {
  return table.flatMap((spec) => {
    const path = [...parent, spec.name];
    return [{ path, spec }, ...walkCommands(spec.subcommands ?? [], path)];
  });
}

function write(stream: NodeJS.WriteStream, text: string): void {
  stream.write(text.endsWith("\n") ? text : `${text}\n`);
}

/**
 * Runs the command `argv` names. -h/--help prints its usage on stdout and exits 0 before its
 * handler (and so its parseArgs) runs; a group with no further word prints its usage on stderr and
 * exits 2; an unknown word is bad input naming the valid commands at that level and the closest.
 */
export async function runCommandTable(
  table: readonly CommandSpec[],
  rootUsage: () => Promise<string>,
  argv: readonly string[],
  signal: AbortSignal,
): Promise<number> {
  const { path, spec, rest } = resolveCommand(table, argv);
  const usage = () => (spec ? usageText(spec, path) : rootUsage());
  if (asksForHelp(rest)) {
    write(process.stdout, await usage());
    return 0;
  }
  const choices = spec ? (spec.subcommands ?? []) : table;
  if (spec?.run !== undefined) return spec.run(rest, signal);
  const [word] = rest;
  if (word === undefined) {
    write(process.stderr, await usage());
    return 2;
  }
  if (word === "help" && spec !== undefined) {
    write(process.stdout, await usage());
    return 0;
  }
  if (word.startsWith("-")) throw unknownGroupOption(word, choices);
  const what = path.length === 0 ? "command" : `${path.join(" ")} command`;
  throw unknownWord(
    what,
    word,
    choices.map((c) => c.name),
  );
}

/** An option where a (sub)command word is due: only -h/--help and the commands' option aliases (--version) go there. */
function unknownGroupOption(word: string, choices: readonly CommandSpec[]): RekindleError {
  const known = [
    ...HELP_FLAGS,
    ...choices.flatMap((c) => (c.aliases ?? []).filter((a) => a.startsWith("-"))),
  ];
  const meant = didYouMean(
    word,
    known.filter((k) => k.startsWith("--")),
  );
  return new RekindleError(
    "INVALID_INPUT",
    `unknown option '${word}' (a command comes first)${meant !== undefined ? `; did you mean ${meant}?` : ""}`,
    { details: { [USAGE_ERROR]: true, option: word, ...(meant !== undefined ? { suggestion: meant } : {}) } },
  );
}

/**
 * `unknown kind command "build"; valid: build-image, build-controller-image; did you mean
 * build-image?`: one line (the CLI adds where the usage is).
 */
export function unknownWord(what: string, word: string, valid: readonly string[]): RekindleError {
  const meant = didYouMean(word, valid);
  return new RekindleError(
    "INVALID_INPUT",
    `unknown ${what} ${JSON.stringify(word)}; valid: ${valid.join(", ")}${meant !== undefined ? `; did you mean ${meant}?` : ""}`,
    {
      details: {
        [USAGE_ERROR]: true,
        what,
        got: word,
        valid,
        ...(meant !== undefined ? { suggestion: meant } : {}),
      },
    },
  );
}
