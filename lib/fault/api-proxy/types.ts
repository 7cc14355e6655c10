// What a running API fault proxy is and says about itself (proxy.ts starts one; the control
// server, rules.ts and the CLI read these): a leaf, so neither end imports the other.
import type { k8s } from "../../kube/client.js";
import type { FlowStatus, ProxyCounters } from "./flow.js";
import type { FaultRule } from "./rules.js";

export interface ProxyStatus {
  /** The proxy's URL, which clients use as their server. */
  url: string;
  upstream: string;
  controlUrl?: string;
  kubeconfig?: string;
  /** Each rule in its text form (rule-syntax.ts), in the order they are tried. */
  rules: string[];
  streams: FlowStatus[];
  counters: ProxyCounters;
}

export interface ApiProxy extends AsyncDisposable {
  readonly url: string;
  /** The control API's URL (http://127.0.0.1:PORT), absent with controlPort false. */
  readonly controlUrl: string | undefined;
  /** The CA that verifies the proxy's certificate (PEM), when it serves TLS. */
  readonly caPem: string | undefined;
  /** A client configuration that reaches the apiserver through the proxy. */
  kubeConfig(): k8s.KubeConfig;
  /** Replaces the rules (checked whole first: bad input changes nothing) and applies them to open streams. */
  setRules(rules: readonly (FaultRule | string)[]): ProxyStatus;
  clearRules(): ProxyStatus;
  rules(): readonly FaultRule[];
  status(): ProxyStatus;
  /** Ends every open stream and stops listening. */
  close(): Promise<void>;
}
