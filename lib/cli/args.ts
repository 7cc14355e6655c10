// Argument helpers shared by the CLI commands.
import { RekindleError } from "../errors.js";

export function parseCount(flag: string, text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value)) {
    throw new RekindleError("INVALID_INPUT", `${flag} takes a whole number, not ${JSON.stringify(text)}`);
  }
  return value;
}

/** node:util parseArgs throws TypeErrors with codes like ERR_PARSE_ARGS_UNKNOWN_OPTION. */
export function isParseArgsError(error: unknown): error is Error & { code: string } {
  if (!(error instanceof TypeError)) return false;
  const code: unknown = (error as TypeError & { code?: unknown }).code;
  return typeof code === "string" && code.startsWith("ERR_PARSE_ARGS");
}
