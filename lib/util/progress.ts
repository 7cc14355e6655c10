// Progress reporting for long work (builds, cluster boot, waits): what is happening and for how long.

export interface Progress {
  /** A one-line status message. */
  info(message: string): void;
  /** Starts a named phase; `end()` reports its duration and returns it in ms. */
  phase(name: string): ProgressPhase;
  /** A line worth showing only when more progress is asked for (-v). Default: dropped. */
  detail?(message: string): void;
}

export interface ProgressPhase {
  update(message: string): void;
  end(result?: string): number;
}

/**
 * How much a console progress shows: quiet nothing (errors and the result are not progress),
 * normal its status lines and phases, verbose also the `detail` lines.
 */
export type ProgressLevel = "quiet" | "normal" | "verbose";

export const PROGRESS_LEVELS: readonly ProgressLevel[] = ["quiet", "normal", "verbose"];

/** The environment variable that carries the level to rekindle's own child processes (parallel runs). */
export const PROGRESS_LEVEL_ENV = "REKINDLE_PROGRESS";

function isProgressLevel(text: string | undefined): text is ProgressLevel {
  return (PROGRESS_LEVELS as readonly (string | undefined)[]).includes(text);
}

/** The level consoleProgress uses when given none: the CLI's -q/-v, else $REKINDLE_PROGRESS, else normal. */
export function progressLevel(): ProgressLevel {
  const fromEnv = process.env[PROGRESS_LEVEL_ENV];
  return isProgressLevel(fromEnv) ? fromEnv : "normal";
}

/**
 * Sets the default level for this process and its children (set once, at the CLI's edge, from
 * -q/-v); returns a function that restores the previous one (the in-process tests run many commands).
 */
export function setProgressLevel(level: ProgressLevel): () => void {
  const previous = process.env[PROGRESS_LEVEL_ENV];
  if (level === "normal") delete process.env["REKINDLE_PROGRESS"];
  else process.env[PROGRESS_LEVEL_ENV] = level;
  return () => {
    if (previous === undefined) delete process.env["REKINDLE_PROGRESS"];
    else process.env[PROGRESS_LEVEL_ENV] = previous;
  };
}

export interface ConsoleProgressOptions {
  /** Default progressLevel() (the CLI's -q/-v). */
  level?: ProgressLevel;
}

/** Writes `[rekindle +12.3s] message` lines to a stream (stderr by default), as much as its level shows. */
export function consoleProgress(
  stream: NodeJS.WritableStream = process.stderr,
  options: ConsoleProgressOptions = {},
): Progress {
  const level = options.level ?? progressLevel();
  if (level === "quiet") return silentProgress;
  const origin = Date.now();
  const stamp = (): string => `[rekindle +${((Date.now() - origin) / 1000).toFixed(1)}s]`;
  return {
    info(message) {
      stream.write(`${stamp()} ${message}\n`);
    },
    detail(message) {
      if (level === "verbose") stream.write(`${stamp()} ${message}\n`);
    },
    phase(name) {
      const started = Date.now();
      stream.write(`${stamp()} ${name}…\n`);
      return {
        update(message) {
          stream.write(`${stamp()} ${name}: ${message}\n`);
        },
        end(result) {
          const ms = Date.now() - started;
          stream.write(`${stamp()} ${name}: ${result ?? "done"} in ${(ms / 1000).toFixed(1)}s\n`);
          return ms;
        },
      };
    },
  };
}

/** Swallows everything; the default for library calls that were given no progress sink. */
export const silentProgress: Progress = {
  info() {
    /* silent */
  },
  phase() {
    const started = Date.now();
    return {
      update() {
        /* silent */
      },
      end() {
        return Date.now() - started;
      },
    };
  },
};
