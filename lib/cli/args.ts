// Argument helpers shared by the CLI commands.
export { parseCount } from "../util/parse-count.js";

/** node:util parseArgs throws TypeErrors with codes like ERR_PARSE_ARGS_UNKNOWN_OPTION. */
export function isParseArgsError(error: unknown): error is Error & { code: string } {
  if (!(error instanceof TypeError)) return false;
  const code: unknown = (error as TypeError & { code?: unknown }).code;
  return typeof code === "string" && code.startsWith("ERR_PARSE_ARGS");
}
