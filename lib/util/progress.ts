// Progress reporting for long work (builds, cluster boot, waits): what is happening and for how long.

export interface Progress {
  /** A one-line status message. */
  info(message: string): void;
  /** Starts a named phase; `end()` reports its duration and returns it in ms. */
  phase(name: string): ProgressPhase;
}

export interface ProgressPhase {
  update(message: string): void;
  end(result?: string): number;
}

/** Writes `[rekindle +12.3s] message` lines to a stream (stderr by default). */
export function consoleProgress(stream: NodeJS.WritableStream = process.stderr): Progress {
  const origin = Date.now();
  const stamp = (): string => `[rekindle +${((Date.now() - origin) / 1000).toFixed(1)}s]`;
  return {
    info(message) {
      stream.write(`${stamp()} ${message}\n`);
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
