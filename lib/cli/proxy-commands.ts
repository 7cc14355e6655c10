// `rekindle proxy …`: the API fault proxy (lib/fault/api-proxy/) in the foreground, and its rules
// set, cleared and listed through its control API, found by --name (a state file) or --control.
import { resolve } from "node:path";
import { RekindleError } from "../errors.js";
import { clearProxyRules, proxyStatus, setProxyRules } from "../fault/api-proxy/control-client.js";
import { startApiProxy, type ProxyStatus } from "../fault/api-proxy/proxy.js";
import { RULE_FORM, parseRule } from "../fault/api-proxy/rule-syntax.js";
import {
  DEFAULT_PROXY_NAME,
  proxyStatePath,
  readProxyState,
  removeProxyState,
  writeProxyState,
} from "../fault/api-proxy/state-file.js";
import { parseOptions } from "../util/parse-options.js";
import { OUTPUT_OPTION, OUTPUT_USAGE, outputFormat, writeJson } from "./args.js";
import { notice } from "./notice.js";

const RULE_HELP = `      RULE: ${RULE_FORM}
        actions: freeze | bookmarks | close[=all|open|new] | delay=DURATION | drop-writes[=503|hang]
        e.g. freeze,leases.coordination.k8s.io,ns=kube-node-lease   delay=2s,nodes,verbs=write`;

export const PROXY_START_USAGE = `rekindle proxy start --kubeconfig F [--context C] [--listen 127.0.0.1:PORT] [--out-kubeconfig F]
                     [--tls] [--control-port P] [--name X] [--rule RULE]…
      run the API fault proxy in the foreground until Ctrl-C/SIGTERM: it forwards to the kubeconfig's
      apiserver as its user, and writes a kubeconfig pointing at itself (default
      <state>/proxy/<name>.kubeconfig; its path is printed on stdout). --listen default 127.0.0.1:0
      (a free port); --tls serves a certificate made at start (default: TLS only off loopback);
      the control API listens on 127.0.0.1:--control-port (default a free one); default --name rekindle`;
export const PROXY_SET_USAGE = `rekindle proxy set RULE… [--name X | --control URL] ${OUTPUT_USAGE}
      replace the running proxy's rules (the first rule that matches a request decides)
${RULE_HELP}`;
export const PROXY_CLEAR_USAGE = `rekindle proxy clear [--name X | --control URL] ${OUTPUT_USAGE}
      remove every rule: open streams flow again, a held write is answered 503`;
export const PROXY_STATUS_USAGE = `rekindle proxy status [--name X | --control URL] ${OUTPUT_USAGE}
      the proxy's rules, open streams and counters (-o json: {url, upstream, controlUrl, kubeconfig,
      rules, streams: [{id, method, target, verb, state, startedAt}], counters})`;

export const PROXY_USAGE = `rekindle proxy <command>: an API fault proxy between a controller and kube-apiserver (docs/api-fault-proxy.md)

${[PROXY_START_USAGE, PROXY_SET_USAGE, PROXY_CLEAR_USAGE, PROXY_STATUS_USAGE].join("\n")}`;

/** `HOST:PORT` of --listen ([::1]:PORT for IPv6). */
export function parseListen(text: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (host === undefined || !Number.isInteger(port) || port > 65535)
    throw RekindleError.invalidInput(
      "--listen address",
      text,
      "HOST:PORT, e.g. 127.0.0.1:8001 (port 0: a free one)",
    );
  return { host, port };
}

function parsePort(text: string | undefined, what: string): number | undefined {
  if (text === undefined) return undefined;
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port > 65535)
    throw RekindleError.invalidInput(what, text, "a port 0..65535");
  return port;
}

export async function proxyStart(args: string[], signal: AbortSignal): Promise<number> {
  const { values } = parseOptions({
    args,
    options: {
      kubeconfig: { type: "string" },
      context: { type: "string" },
      listen: { type: "string", default: "127.0.0.1:0" },
      "out-kubeconfig": { type: "string" },
      tls: { type: "boolean" },
      "control-port": { type: "string" },
      name: { type: "string", default: DEFAULT_PROXY_NAME },
      rule: { type: "string", multiple: true, default: [] },
    },
    strict: true,
  });
  if (values.kubeconfig === undefined)
    throw new RekindleError("INVALID_INPUT", "rekindle proxy start needs --kubeconfig F", {
      hint: "the kubeconfig of the apiserver to forward to",
    });
  const { host, port } = parseListen(values.listen);
  const controlPort = parsePort(values["control-port"], "--control-port") ?? 0;
  const rules = values.rule.map(parseRule);
  const statePath = proxyStatePath(values.name);
  const outKubeconfig = resolve(values["out-kubeconfig"] ?? statePath.replace(/\.json$/, ".kubeconfig"));
  const proxy = await startApiProxy({
    kubeconfig: values.kubeconfig,
    ...(values.context !== undefined ? { context: values.context } : {}),
    host,
    port,
    ...(values.tls !== undefined ? { tls: values.tls } : {}),
    controlPort,
    outKubeconfig,
    rules,
    signal,
    log: (line) => process.stderr.write(`${new Date().toISOString()} ${line}\n`),
  });
  await using _closed = proxy;
  const status = proxy.status();
  writeProxyState({
    name: values.name,
    pid: process.pid,
    url: proxy.url,
    controlUrl: proxy.controlUrl ?? "",
    upstream: status.upstream,
    kubeconfig: outKubeconfig,
  });
  try {
    notice(
      `api proxy "${values.name}" at ${proxy.url} → ${status.upstream} (control ${proxy.controlUrl ?? "none"}); Ctrl-C stops it\n` +
        `  kubectl --kubeconfig ${outKubeconfig} get nodes\n` +
        `  rekindle proxy set freeze,leases.coordination.k8s.io${values.name === DEFAULT_PROXY_NAME ? "" : ` --name ${values.name}`}`,
    );
    process.stdout.write(`${outKubeconfig}\n`);
    await new Promise<void>((done) => {
      if (signal.aborted) done();
      signal.addEventListener(
        "abort",
        () => {
          done();
        },
        { once: true },
      );
    });
  } finally {
    removeProxyState(values.name);
  }
  return 0;
}

const TARGET_OPTIONS = {
  name: { type: "string", default: DEFAULT_PROXY_NAME },
  control: { type: "string" },
  ...OUTPUT_OPTION,
} as const;

function controlUrl(values: { name: string; control?: string | undefined }): string {
  if (values.control === undefined) return readProxyState(values.name).controlUrl;
  if (!/^http:\/\/[^/]+\/?$/.test(values.control))
    throw RekindleError.invalidInput(
      "--control URL",
      values.control,
      "http://127.0.0.1:PORT, the control API's URL",
    );
  return values.control.replace(/\/$/, "");
}

function report(status: ProxyStatus, format: "text" | "json"): void {
  if (format === "json") {
    writeJson(status);
    return;
  }
  const lines = [
    `proxy ${status.url} → ${status.upstream}${status.kubeconfig !== undefined ? ` (kubeconfig ${status.kubeconfig})` : ""}`,
    status.rules.length === 0 ? "rules: none" : "rules (the first that matches decides):",
    ...status.rules.map((r, i) => `  ${i + 1}. ${r}`),
    `open streams: ${status.streams.length}`,
    ...status.streams.map((s) => `  #${s.id} ${s.method} ${s.target} ${s.state} since ${s.startedAt}`),
    `counters: ${Object.entries(status.counters)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

export async function proxySet(args: string[]): Promise<number> {
  const { values, positionals } = parseOptions({
    args,
    options: TARGET_OPTIONS,
    strict: true,
    allowPositionals: true,
  });
  const format = outputFormat(values.output);
  if (positionals.length === 0)
    throw new RekindleError("INVALID_INPUT", "rekindle proxy set needs one or more rules", {
      hint: `a rule is ${RULE_FORM}; rekindle proxy clear removes them`,
    });
  // Checked here first, so that a typo is bad input before any proxy is asked.
  for (const rule of positionals) parseRule(rule);
  report(await setProxyRules(controlUrl(values), positionals), format);
  return 0;
}

export async function proxyClear(args: string[]): Promise<number> {
  const { values } = parseOptions({ args, options: TARGET_OPTIONS, strict: true });
  const format = outputFormat(values.output);
  report(await clearProxyRules(controlUrl(values)), format);
  return 0;
}

export async function proxyStatusCommand(args: string[]): Promise<number> {
  const { values } = parseOptions({ args, options: TARGET_OPTIONS, strict: true });
  const format = outputFormat(values.output);
  report(await proxyStatus(controlUrl(values)), format);
  return 0;
}
