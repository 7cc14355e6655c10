// The flags every command takes, wherever they stand before a `--`: -q/--quiet (only errors and
// the result) and -v/--verbose (more progress). Taken out of argv before the command parses it.
import type { ProgressLevel } from "../util/progress.js";

const LEVEL_FLAGS: Readonly<Record<string, ProgressLevel>> = {
  "-q": "quiet",
  "--quiet": "quiet",
  "-v": "verbose",
  "--verbose": "verbose",
};

/** The usage lines of the global flags (and of -o, which every command that reports a result takes). */
export const GLOBAL_FLAGS_USAGE = `  -q, --quiet      only errors and the result (of -q and -v, the last one given wins)
  -v, --verbose    more progress (which provider and cluster a command picked, and from where)
  -o text|json     on the commands that report a result: JSON alone on stdout, progress on stderr`;

/**
 * The progress level argv asks for (the last of -q/-v wins; undefined when neither is given: the
 * level stays the process's, normal unless $REKINDLE_PROGRESS says otherwise) and argv without them.
 */
export function globalFlags(argv: readonly string[]): { level: ProgressLevel | undefined; rest: string[] } {
  const end = argv.indexOf("--");
  const options = end < 0 ? argv : argv.slice(0, end);
  let level: ProgressLevel | undefined;
  const rest: string[] = [];
  for (const arg of options) {
    const chosen = LEVEL_FLAGS[arg];
    if (chosen === undefined) rest.push(arg);
    else level = chosen;
  }
  return { level, rest: end < 0 ? rest : [...rest, ...argv.slice(end)] };
}
