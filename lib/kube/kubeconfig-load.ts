// Loads the kubeconfig a command talks to, as kubectl picks it: an explicit file alone; else every
// file $KUBECONFIG lists, merged; else ~/.kube/config; else (where asked) the pod's service account.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { errorMessage, RekindleError } from "../errors.js";
import { k8s } from "./client.js";

export interface KubeconfigChoice {
  /** An explicit file (--kubeconfig): used alone, never merged. Default: $KUBECONFIG, else ~/.kube/config. */
  path?: string;
  /** A context of the loaded configuration. Default: its current-context. */
  context?: string;
  /** With no file anywhere, use the pod's service account (the controller in a pod). Default false: bad input. */
  inCluster?: boolean;
  /** Default process.env (KUBECONFIG is read from it). */
  env?: NodeJS.ProcessEnv;
}

export interface LoadedKubeconfig {
  kc: k8s.KubeConfig;
  /** Where it came from, for messages: a path, several joined by the path delimiter, or "in-cluster". */
  source: string;
}

/** The files $KUBECONFIG lists, in order (empty entries dropped, as kubectl drops them). */
export function kubeconfigEnvFiles(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env["KUBECONFIG"] ?? "").split(delimiter).filter((file) => file !== "");
}

/**
 * Merges loaded kubeconfigs as kubectl merges $KUBECONFIG's files: for each named cluster, user and
 * context the first file that has it wins; current-context comes from the first file that sets one.
 * (client-node's own mergeConfig throws on a repeated name and lets the last current-context win.)
 */
export function mergeKubeconfigs(configs: readonly k8s.KubeConfig[]): k8s.KubeConfig {
  const firstByName = <T extends { name: string }>(lists: readonly (readonly T[])[]): T[] => {
    const seen = new Map<string, T>();
    for (const item of lists.flat()) if (!seen.has(item.name)) seen.set(item.name, item);
    return [...seen.values()];
  };
  // A file without current-context leaves client-node's string-typed field undefined or empty.
  const currentContext = configs
    .map((c): string | undefined => c.currentContext)
    .find((name) => name !== undefined && name !== "");
  const merged = new k8s.KubeConfig();
  merged.loadFromOptions({
    clusters: firstByName(configs.map((c) => c.clusters)),
    users: firstByName(configs.map((c) => c.users)),
    contexts: firstByName(configs.map((c) => c.contexts)),
    currentContext,
  });
  return merged;
}

function loadFile(path: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  try {
    // Relative certificate paths are resolved against the file's own directory, as kubectl does.
    kc.loadFromFile(path);
  } catch (error) {
    throw new RekindleError("INVALID_INPUT", `cannot load the kubeconfig ${path}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  return kc;
}

function noKubeconfig(what: string): RekindleError {
  return new RekindleError("INVALID_INPUT", what, {
    hint: "pass --kubeconfig <file> or set KUBECONFIG (several files joined by ':' are merged)",
  });
}

function loadChosen(choice: KubeconfigChoice): LoadedKubeconfig {
  if (choice.path !== undefined) {
    if (!existsSync(choice.path)) throw noKubeconfig(`kubeconfig ${choice.path} does not exist`);
    return { kc: loadFile(choice.path), source: choice.path };
  }
  const listed = kubeconfigEnvFiles(choice.env);
  if (listed.length > 0) {
    // kubectl skips listed files that do not exist; it fails only when none does.
    const present = listed.filter((file) => existsSync(file));
    if (present.length === 0)
      throw noKubeconfig(`no kubeconfig: none of the files KUBECONFIG lists exists (${listed.join(", ")})`);
    return { kc: mergeKubeconfigs(present.map(loadFile)), source: present.join(delimiter) };
  }
  const home = join(homedir(), ".kube", "config");
  if (existsSync(home)) return { kc: loadFile(home), source: home };
  if (choice.inCluster === true) {
    // client-node's fallback: the pod's service account, or outside a pod its localhost:8080
    // default (a controller started bare then fails on its configuration or the API, as before).
    const kc = new k8s.KubeConfig();
    kc.loadFromDefault();
    return { kc, source: "in-cluster" };
  }
  throw noKubeconfig(`no kubeconfig: KUBECONFIG is unset and ${home} does not exist`);
}

/** The kubeconfig of `choice`, switched to its context; a missing file or unknown context is bad input. */
export function loadKubeconfig(choice: KubeconfigChoice = {}): LoadedKubeconfig {
  const loaded = loadChosen(choice);
  if (choice.context !== undefined) {
    const names = loaded.kc.getContexts().map((c) => c.name);
    if (!names.includes(choice.context)) throw RekindleError.invalidInput("context", choice.context, names);
    loaded.kc.setCurrentContext(choice.context);
  }
  return loaded;
}
