// `rekindle <argv>` run in-process with stdout and stderr captured, for the CLI's unit tests.
import { expect } from "chai";
import { main } from "../../lib/cli/main.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `rekindle <argv>` in-process, capturing stdout and stderr. */
export async function cli(argv: string[]): Promise<CliResult> {
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  let stdout = "";
  let stderr = "";
  process.stdout.write = (chunk: string | Uint8Array) => {
    stdout += chunk.toString();
    return true;
  };
  process.stderr.write = (chunk: string | Uint8Array) => {
    stderr += chunk.toString();
    return true;
  };
  try {
    return { code: await main(argv), stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

/** Asserts the command exited `code` with stderr saying each of `says`. */
export function expectExit(result: CliResult, code: number, ...says: string[]): void {
  expect(result.code, result.stderr).to.equal(code);
  for (const text of says) expect(result.stderr).to.include(text);
}
