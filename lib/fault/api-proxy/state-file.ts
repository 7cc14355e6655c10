// Where a running `rekindle proxy start` says how to reach it, so that `rekindle proxy set`,
// `clear` and `status` find it by name: <state root>/proxy/<name>.json, removed when it stops.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RekindleError } from "../../errors.js";
import { stateRoot } from "../../util/paths.js";

export interface ProxyStateRecord {
  name: string;
  pid: number;
  url: string;
  controlUrl: string;
  upstream: string;
  kubeconfig?: string;
}

/** The default --name. */
export const DEFAULT_PROXY_NAME = "rekindle";

const NAME_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function proxyStatePath(name: string, env: NodeJS.ProcessEnv = process.env): string {
  if (!NAME_PATTERN.test(name))
    throw RekindleError.invalidInput("proxy name", name, "lowercase letters, digits and '-', up to 63");
  return join(stateRoot(env), "proxy", `${name}.json`);
}

export function writeProxyState(record: ProxyStateRecord, env: NodeJS.ProcessEnv = process.env): string {
  const path = proxyStatePath(record.name, env);
  mkdirSync(join(stateRoot(env), "proxy"), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  return path;
}

export function removeProxyState(name: string, env: NodeJS.ProcessEnv = process.env): void {
  rmSync(proxyStatePath(name, env), { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The running proxy called `name`; NOT_FOUND when none runs (a record its dead process left is removed). */
export function readProxyState(name: string, env: NodeJS.ProcessEnv = process.env): ProxyStateRecord {
  const path = proxyStatePath(name, env);
  let record: ProxyStateRecord;
  try {
    record = JSON.parse(readFileSync(path, "utf8")) as ProxyStateRecord;
  } catch {
    throw new RekindleError("NOT_FOUND", `no proxy named ${JSON.stringify(name)} is running`, {
      hint: "start one with `rekindle proxy start --kubeconfig F`, or pass --control URL",
      details: { path },
    });
  }
  if (!alive(record.pid)) {
    rmSync(path, { force: true });
    throw new RekindleError(
      "NOT_FOUND",
      `the proxy ${JSON.stringify(name)} (pid ${record.pid}) is no longer running`,
      {
        hint: "start it again with `rekindle proxy start --kubeconfig F`",
      },
    );
  }
  return record;
}
