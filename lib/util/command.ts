// Runs short-lived commands through execa; failures become RekindleError with a pasteable command line.
import { execa, ExecaError, type Options } from "execa";
import { RekindleError } from "../errors.js";

export interface CommandResult {
  stdout: string;
  stderr: string;
}

export interface RunCommandOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** Kill the command after this long. Default: no limit. */
  timeoutMs?: number;
  /** Text fed to stdin (fence agents take their parameters there). */
  input?: string;
  /** Called with each line of combined output, for progress. */
  onLine?: (line: string) => void;
}

/** Shell-quotes an argument so the printed command can be pasted into a terminal. */
export function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

export function commandLine(file: string, args: readonly string[]): string {
  return [file, ...args].map(shellQuote).join(" ");
}

export async function runCommand(
  file: string,
  args: readonly string[],
  options: RunCommandOptions = {},
): Promise<CommandResult> {
  const execaOptions: Options = {
    cwd: options.cwd,
    env: options.env,
    extendEnv: options.env === undefined,
    cancelSignal: options.signal,
    timeout: options.timeoutMs,
    input: options.input,
    stripFinalNewline: true,
    all: true,
    buffer: true,
  };
  try {
    const subprocess = execa(file, args, execaOptions);
    const onLine = options.onLine;
    if (onLine && subprocess.all) {
      let pending = "";
      subprocess.all.on("data", (chunk: Buffer) => {
        pending += chunk.toString();
        const lines = pending.split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) onLine(line);
      });
    }
    const result = await subprocess;
    return { stdout: String(result.stdout), stderr: String(result.stderr) };
  } catch (error) {
    const line = commandLine(file, args);
    if (error instanceof ExecaError) {
      const output =
        typeof error.all === "string" ? error.all : `${String(error.stdout)}\n${String(error.stderr)}`;
      const tail = output.trim().split("\n").slice(-25).join("\n");
      const reason = error.isCanceled
        ? "was cancelled"
        : error.timedOut
          ? `timed out after ${options.timeoutMs} ms`
          : error.exitCode !== undefined
            ? `exited with code ${error.exitCode}`
            : `failed: ${error.shortMessage}`;
      throw new RekindleError(error.isCanceled ? "ABORTED" : "COMMAND_FAILED", `${file} ${reason}`, {
        details: { command: line, exitCode: error.exitCode, outputTail: tail, cwd: options.cwd },
        cause: error,
      });
    }
    throw new RekindleError("COMMAND_FAILED", `${file} could not be run`, {
      details: { command: line },
      cause: error,
    });
  }
}
