// Where the controller serves /metrics and /healthz: --metrics-bind-address HOST:PORT, or the older
// --metrics-port P on the default host. The default host is loopback, so a controller run on a
// workstation exposes nothing; in a pod it is every interface, as the kubelet's probes and the
// Service in front of the port need (deploy/controller/service.yaml).
import { isIP } from "node:net";
import { RekindleError } from "../errors.js";
import { parseCount } from "../util/parse-count.js";

export const DEFAULT_METRICS_PORT = 9464;
export const LOOPBACK_HOST = "127.0.0.1";
export const ALL_INTERFACES_HOST = "0.0.0.0";

export interface MetricsAddress {
  /** An IP address or host name to listen on (IPv6 without brackets). */
  host: string;
  /** 0 picks a free port. */
  port: number;
}

const VALID_ADDRESS =
  "HOST:PORT, e.g. 127.0.0.1:9464 (this machine only), 0.0.0.0:9464 (every interface) or [::1]:9464; port 0 picks a free one";

/** A host name per RFC 1123: dot-separated labels of letters, digits and inner hyphens. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

const PORT_RANGE = "a TCP port from 0 to 65535 (0: any free one)";

function parsePort(flag: string, text: string): number {
  const port = parseCount(flag, text);
  if (port > 65_535) throw RekindleError.invalidInput(flag, text, PORT_RANGE);
  return port;
}

/** "HOST:PORT" or "[IPv6]:PORT", checked. An empty host is refused: say 0.0.0.0 to mean every interface. */
export function parseBindAddress(text: string, flag = "--metrics-bind-address"): MetricsAddress {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d+)$/.exec(text.trim());
  const host = match?.[1] ?? match?.[2];
  const bracketed = match?.[1] !== undefined;
  const valid =
    host !== undefined &&
    (bracketed ? isIP(host) === 6 : host !== "" && (isIP(host) === 4 || HOST_NAME.test(host)));
  if (!match || !valid) {
    const hint =
      match?.[2] === ""
        ? `; an empty host is not "every interface" here: write ${ALL_INTERFACES_HOST}:${match[3] ?? ""}`
        : "";
    throw RekindleError.invalidInput(flag, text, `${VALID_ADDRESS}${hint}`);
  }
  const port = Number(match[3]);
  if (port > 65_535) throw RekindleError.invalidInput(flag, text, `${VALID_ADDRESS}; the port ${PORT_RANGE}`);
  return { host, port };
}

/**
 * The address from the flags: --metrics-bind-address, else --metrics-port (default 9464) on
 * 127.0.0.1, or on 0.0.0.0 when `inCluster` (the controller runs in a pod). Both flags at once
 * are refused.
 */
export function metricsAddress(
  flags: { "metrics-bind-address"?: string | undefined; "metrics-port"?: string | undefined },
  inCluster: boolean,
): MetricsAddress {
  const bind = flags["metrics-bind-address"];
  const port = flags["metrics-port"];
  if (bind !== undefined && port !== undefined) {
    throw new RekindleError("INVALID_INPUT", "--metrics-bind-address and --metrics-port both given", {
      hint: `give one: --metrics-bind-address ${bind} already names the port`,
    });
  }
  if (bind !== undefined) return parseBindAddress(bind);
  return {
    host: inCluster ? ALL_INTERFACES_HOST : LOOPBACK_HOST,
    port: port === undefined ? DEFAULT_METRICS_PORT : parsePort("--metrics-port", port),
  };
}

/** HOST:PORT as a URL authority (IPv6 bracketed). */
export function formatAddress(address: MetricsAddress): string {
  return `${isIP(address.host) === 6 ? `[${address.host}]` : address.host}:${address.port}`;
}
