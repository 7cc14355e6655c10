// `rekindle agent install|uninstall`: rekindle's node agent (lib/agent/) on a cluster rekindle did
// not create, opt-in. The kubeconfig as `rekindle reap` and kubectl pick it.
import { parseOptions } from "../util/parse-options.js";
import { installAgent, uninstallAgent } from "../agent/install.js";
import { AGENT_NAMESPACE } from "../agent/protocol.js";
import { RekindleError } from "../errors.js";
import { loadKubeconfig } from "../kube/kubeconfig-load.js";
import { consoleProgress } from "../util/progress.js";
import { OUTPUT_OPTION, OUTPUT_USAGE, outputFormat, writeJson } from "./args.js";

const COMMON = `[--kubeconfig K] [--context C] [--namespace N]`;
const KUBECONFIG_TEXT = `Kubeconfig as kubectl picks it (default $KUBECONFIG, else ~/.kube/config; its current context);
      --namespace default ${AGENT_NAMESPACE}.`;

export const AGENT_USAGE = `rekindle agent install|uninstall ${COMMON}
      rekindle's node agent: a privileged DaemonSet on every worker (never a control-plane node)
      that applies node faults on request (node loss, partition from the API server, memory or
      disk fill) and reverts each at its deadline by itself, also with rekindle gone`;

export const AGENT_INSTALL_USAGE = `rekindle agent install ${COMMON} [--image REF] [--timeout SECONDS] ${OUTPUT_USAGE}
      creates the namespace, RBAC and DaemonSet rekindle-agent and waits until its pod is Ready on
      every worker node; --image default rekindle:<version> (the controller image, which carries the
      agent: rekindle kind build-controller-image), which the nodes must have or pull;
      --timeout default 120. ${KUBECONFIG_TEXT} -o json: {namespace, nodes}.
      Exit 0: Ready everywhere; 2: no right to create it (the RBAC message quoted), an image the
      nodes cannot run (node and reason named), a namespace that is not the agent's; 3: the cluster
      did not answer, or pods not Ready for another reason. On failure nothing is left behind.`;

export const AGENT_UNINSTALL_USAGE = `rekindle agent uninstall ${COMMON} ${OUTPUT_USAGE}
      reverts every fault the agents still hold (a revert request each, answered), then removes
      the DaemonSet, RBAC and namespace; the agents remove their state on the nodes as they stop.
      ${KUBECONFIG_TEXT} -o json: {namespace, reverted}.
      Exit 0: removed (also when it was not installed); 2: no right to; 3: the cluster did not answer`;

const OPTIONS = {
  kubeconfig: { type: "string" },
  context: { type: "string" },
  namespace: { type: "string" },
  image: { type: "string" },
  timeout: { type: "string" },
  ...OUTPUT_OPTION,
} as const;

function parse(command: "install" | "uninstall", args: string[]) {
  const { values, positionals } = parseOptions({
    args,
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  const format = outputFormat(values.output);
  if (positionals.length > 0)
    throw new RekindleError(
      "INVALID_INPUT",
      `rekindle agent ${command} takes no arguments, got ${positionals.join(" ")}`,
      {
        hint: `usage: ${command === "install" ? AGENT_INSTALL_USAGE.split("\n")[0] : AGENT_UNINSTALL_USAGE.split("\n")[0]}`,
      },
    );
  if (command === "uninstall" && (values.image !== undefined || values.timeout !== undefined))
    throw new RekindleError("INVALID_INPUT", "rekindle agent uninstall takes no --image or --timeout", {
      hint: "it takes --kubeconfig, --context, --namespace and -o",
    });
  if (values.namespace !== undefined && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(values.namespace))
    throw RekindleError.invalidInput(
      "--namespace",
      values.namespace,
      "a DNS-1123 label, e.g. rekindle-agent",
    );
  if (values.image === "")
    throw RekindleError.invalidInput("--image", "", "an image reference, e.g. rekindle:0.1.0");
  let readyMs: number | undefined;
  if (values.timeout !== undefined) {
    const seconds = Number(values.timeout);
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > 3600)
      throw RekindleError.invalidInput("--timeout", values.timeout, "whole seconds from 1 to 3600");
    readyMs = seconds * 1000;
  }
  const { kc, source } = loadKubeconfig({
    ...(values.kubeconfig !== undefined ? { path: values.kubeconfig } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
  });
  return { values, kc, source, readyMs, format };
}

export async function agentInstall(args: string[], signal: AbortSignal): Promise<number> {
  const { values, kc, source, readyMs, format } = parse("install", args);
  const progress = consoleProgress();
  progress.info(`cluster: ${kc.getCurrentCluster()?.server ?? "?"} (${source})`);
  const nodes = await installAgent(kc, {
    ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
    ...(values.image !== undefined ? { image: values.image } : {}),
    ...(readyMs !== undefined ? { timeouts: { readyMs } } : {}),
    progress,
    signal,
  });
  if (format === "json") writeJson({ namespace: values.namespace ?? AGENT_NAMESPACE, nodes });
  else process.stdout.write(`rekindle agent Ready on ${nodes.length} node(s): ${nodes.join(", ")}\n`);
  return 0;
}

export async function agentUninstall(args: string[], signal: AbortSignal): Promise<number> {
  const { values, kc, source, format } = parse("uninstall", args);
  const progress = consoleProgress();
  progress.info(`cluster: ${kc.getCurrentCluster()?.server ?? "?"} (${source})`);
  const reverted = await uninstallAgent(kc, {
    ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
    progress,
    signal,
  });
  if (format === "json") {
    writeJson({ namespace: values.namespace ?? AGENT_NAMESPACE, reverted });
    return 0;
  }
  for (const line of reverted) process.stdout.write(`reverted: ${line}\n`);
  process.stdout.write(`rekindle agent removed${reverted.length === 0 ? " (no fault was held)" : ""}\n`);
  return 0;
}
