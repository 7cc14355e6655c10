// Host kernel settings a kind run changes. kind nodes share the host's kernel: every node's
// kubelet writes a few global sysctls (kernel.panic=10, kernel.panic_on_oops=1,
// vm.overcommit_memory=1), and several nodes need more inotify instances than a default host
// gives (128). Recorded before the cluster exists, raised where needed, restored after it is gone.
import { readFileSync, writeFileSync } from "node:fs";
import type { Progress } from "../../util/progress.js";

/** Settings the kubelets write; restored as they were. */
export const KUBELET_WRITTEN_SYSCTLS = [
  "kernel.panic",
  "kernel.panic_on_oops",
  "vm.overcommit_memory",
] as const;
/** Minimums for a 4-node cluster (kind's known-issues page gives the same order of magnitude). */
export const INOTIFY_MINIMUMS: Readonly<Record<string, number>> = {
  "fs.inotify.max_user_instances": 512,
  "fs.inotify.max_user_watches": 524288,
};

function procPath(name: string): string {
  return `/proc/sys/${name.replaceAll(".", "/")}`;
}

function read(name: string): string | undefined {
  try {
    return readFileSync(procPath(name), "utf8").trim();
  } catch {
    return undefined;
  }
}

function write(name: string, value: string): boolean {
  try {
    writeFileSync(procPath(name), value);
    return true;
  } catch {
    return false;
  }
}

export interface HostSettings {
  /** Puts back every recorded value that differs now; says what it restored. */
  restore(): void;
}

/** Records the settings, raises inotify limits below the minimums, and says what it changed. */
export function prepareHostSettings(progress: Progress): HostSettings {
  const names = [...KUBELET_WRITTEN_SYSCTLS, ...Object.keys(INOTIFY_MINIMUMS)];
  const before = new Map(names.map((n) => [n, read(n)] as const));
  for (const [name, minimum] of Object.entries(INOTIFY_MINIMUMS)) {
    const current = Number(before.get(name));
    if (!Number.isFinite(current) || current >= minimum) continue;
    if (write(name, String(minimum))) {
      progress.info(
        `host: ${name} ${current} → ${minimum} for the kind nodes (restored after the cluster is deleted)`,
      );
    } else {
      progress.info(
        `warning: host ${name} is ${current}, below ${minimum}: kind nodes may fail with "too many open files" (raise it as root: sysctl -w ${name}=${minimum})`,
      );
    }
  }
  return {
    restore() {
      const restored: string[] = [];
      for (const [name, value] of before) {
        if (value === undefined || read(name) === value) continue;
        if (write(name, value)) restored.push(`${name}=${value}`);
      }
      if (restored.length > 0) progress.info(`host settings restored: ${restored.join(", ")}`);
    },
  };
}
