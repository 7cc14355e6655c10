// Argument helpers shared by the CLI commands.
import { RekindleError } from "../errors.js";

export { parseCount, parseCountIn } from "../util/parse-count.js";

export const OUTPUT_FORMATS = ["text", "json"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** `-o/--output text|json`, for a command's parseArgs options (default text). */
export const OUTPUT_OPTION = { output: { type: "string", short: "o" } } as const;

/** The usage text of OUTPUT_OPTION. */
export const OUTPUT_USAGE = "[-o text|json]";

/**
 * The format `-o/--output` names; anything but text or json is bad input naming the valid values.
 * `jsonFlag` is an older `--json` switch kept as an alias of `-o json`.
 */
export function outputFormat(output: string | undefined, jsonFlag = false): OutputFormat {
  const format = output ?? (jsonFlag ? "json" : "text");
  if (!isOutputFormat(format)) throw RekindleError.invalidInput("--output format", output, OUTPUT_FORMATS);
  if (jsonFlag && output === "text")
    throw new RekindleError("INVALID_INPUT", "--json and -o text contradict each other", {
      hint: "--json is -o json; pass one of them",
    });
  return format;
}

function isOutputFormat(text: string): text is OutputFormat {
  return (OUTPUT_FORMATS as readonly string[]).includes(text);
}

/** Writes `value` as indented JSON and a newline: the whole of stdout under `-o json`. */
export function writeJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
