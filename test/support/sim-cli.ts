// The CLI as a user types it against a background sim cluster: rekindle itself and the sim's
// kubectl, in the environment the test gives (its own REKINDLE_STATE_DIR, so its clusters never
// meet a person's).
import { execa } from "execa";
import { cachedSimBinaries } from "../../lib/build/sim-binaries.js";
import { REKINDLE_BIN } from "./rekindle-run.js";

export function simCli(env: NodeJS.ProcessEnv) {
  return {
    rekindle: (...args: string[]) =>
      execa(process.execPath, [REKINDLE_BIN, ...args], { env, reject: false, timeout: 180_000 }),
    kubectl: (kubeconfig: string, ...args: string[]) => {
      const binaries = cachedSimBinaries();
      if (!binaries)
        throw new Error("sim binaries are not built (npm run test:integration builds them first)");
      return execa(binaries.kubectl, ["--kubeconfig", kubeconfig, ...args], {
        reject: false,
        timeout: 60_000,
      });
    },
  };
}
