// node:util parseArgs whose refusals are bad input in one line: the option named, the closest one
// the command knows (did you mean …?), never node's advice about positionals after `--`.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { RekindleError } from "../errors.js";
import { didYouMean } from "./did-you-mean.js";

/** node:util parseArgs throws TypeErrors with codes like ERR_PARSE_ARGS_UNKNOWN_OPTION. */
export function isParseArgsError(error: unknown): error is TypeError & { code: string } {
  if (!(error instanceof TypeError)) return false;
  const code: unknown = (error as TypeError & { code?: unknown }).code;
  return typeof code === "string" && code.startsWith("ERR_PARSE_ARGS");
}

export interface ParseOptionsExtras {
  /**
   * Older spellings kept working, old → new (both declared in the options); a typo close to an old
   * one is pointed at the new one. Default: none.
   */
  aliases?: Readonly<Record<string, string>>;
}

/** The RekindleError details that mark a refusal of the command line's options or command words (the CLI adds `see: … --help`). */
export const USAGE_ERROR = "usageError";

/** parseArgs(config); a refusal is a RekindleError INVALID_INPUT naming the option and what was meant. */
export function parseOptions<T extends ParseArgsConfig>(
  config: T,
  extras: ParseOptionsExtras = {},
): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    if (!isParseArgsError(error)) throw error;
    throw optionError(error, Object.keys(config.options ?? {}), extras.aliases ?? {});
  }
}

/** One line for a parseArgs refusal; `known` are the option names without dashes. */
export function optionError(
  error: TypeError & { code: string },
  known: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): RekindleError {
  const quoted = /'([^']+)'/.exec(error.message)?.[1] ?? "";
  const option = quoted.replace(/ <value>$/, "");
  const details = { [USAGE_ERROR]: true, option, parseArgsCode: error.code };
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION": {
      const meant = option.startsWith("--")
        ? suggestion(option.slice(2).split("=")[0] ?? "", known, aliases)
        : undefined;
      return new RekindleError(
        "INVALID_INPUT",
        `unknown option '${option}'${meant !== undefined ? `; did you mean --${meant}?` : ""}`,
        { details: { ...details, ...(meant !== undefined ? { suggestion: `--${meant}` } : {}) } },
      );
    }
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return new RekindleError(
        "INVALID_INPUT",
        quoted.endsWith(" <value>")
          ? `option '${option}' needs a value`
          : `option '${option}' takes no value`,
        { details },
      );
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return new RekindleError(
        "INVALID_INPUT",
        `unexpected argument '${option}': this command takes options only`,
        {
          details,
        },
      );
    default:
      return new RekindleError("INVALID_INPUT", error.message.split(". ")[0] ?? error.message, { details });
  }
}

function suggestion(
  typed: string,
  known: readonly string[],
  aliases: Readonly<Record<string, string>>,
): string | undefined {
  const meant = didYouMean(typed, known);
  return meant === undefined ? undefined : (aliases[meant] ?? meant);
}
