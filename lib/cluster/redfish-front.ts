// A Redfish front: an HTTPS service between a Redfish client (the controller's redfish driver) and a
// real BMC or emulator, that forwards every request as it came and, for a system whose BMC is told
// to lie (bmc-lies.ts, by the system's Name or Id), answers PowerState "Off" on every read, or
// acknowledges a power-off ComputerSystem.Reset (204) without forwarding it. Authentication stays
// the BMC's: a lie is only told to a caller the BMC accepted.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { createServer, request as httpsRequest } from "node:https";
import { request as plainRequest } from "node:http";
import { errorMessage, RekindleError } from "../errors.js";
import { silentProgress, type Progress } from "../util/progress.js";
import { BmcLies } from "./bmc-lies.js";

export interface RedfishFrontOptions {
  /** The BMC it fronts: https://host:port (or http://). */
  upstream: string;
  /** Verify the upstream with this CA (PEM). Default: none given, see `upstreamInsecure`. */
  upstreamCa?: string;
  /** Accept any upstream certificate (an emulator's self-signed one). Default false. */
  upstreamInsecure?: boolean;
  /** The front's own serving key and certificate (PEM). */
  tls: { key: string; cert: string };
  /** Address to listen on. Default 127.0.0.1. */
  host?: string;
  /** TCP port. Default 0: a free one (the bound port is in `url`). */
  port?: number;
  /** What each system's BMC lies about, keyed by the system's Name or Id. Default: none lies. */
  lies?: BmcLies;
  /** One line per lie told. Default: silent. */
  progress?: Progress;
}

export interface RedfishFront extends AsyncDisposable {
  /** https://<host>:<port>, the redfish driver's `url` option. */
  readonly url: string;
  readonly lies: BmcLies;
  /** Stops listening and drops every connection. Idempotent. */
  close(): Promise<void>;
}

/** Reset types that end with the system off: what a lying power-off acknowledges and drops. */
const POWER_OFF_RESETS = new Set(["ForceOff", "GracefulShutdown", "PushPowerButton"]);
const SYSTEM = /^\/redfish\/v1\/Systems\/([^/]+)\/?$/;
const RESET = /^\/redfish\/v1\/Systems\/([^/]+)\/Actions\/ComputerSystem\.Reset\/?$/;
/** Longest request body read (a Reset is a few bytes of JSON). */
const MAX_BODY_BYTES = 64 * 1024;

interface Upstream {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

async function readAll(stream: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) throw new RekindleError("INVALID_INPUT", `request body over ${limit} bytes`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** Hop-by-hop headers, and the length (recomputed), are not passed on. */
function passable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (["connection", "keep-alive", "transfer-encoding", "content-length", "host"].includes(name)) continue;
    out[name] = value;
  }
  return out;
}

/** One request sent on to the BMC behind the front, answered whole. */
function forwardTo(
  upstream: URL,
  options: Pick<RedfishFrontOptions, "upstreamInsecure" | "upstreamCa">,
  request: { method: string; path: string; headers: IncomingHttpHeaders; body: Buffer },
): Promise<Upstream> {
  const { method, path, headers, body } = request;
  return new Promise<Upstream>((resolve, reject) => {
    const send = upstream.protocol === "https:" ? httpsRequest : plainRequest;
    const req = send(
      new URL(path, upstream),
      {
        method,
        headers: { ...passable(headers), "content-length": String(body.length) },
        ...(upstream.protocol === "https:"
          ? {
              rejectUnauthorized: options.upstreamInsecure !== true,
              ...(options.upstreamCa ? { ca: options.upstreamCa } : {}),
            }
          : {}),
      },
      (res) => {
        readAll(res, 16 * 1024 * 1024).then((data) => {
          resolve({ status: res.statusCode ?? 502, headers: res.headers, body: data });
        }, reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** Starts the front; resolves once it listens. */
export async function startRedfishFront(options: RedfishFrontOptions): Promise<RedfishFront> {
  const upstream = new URL(options.upstream);
  if (upstream.protocol !== "https:" && upstream.protocol !== "http:") {
    throw RekindleError.invalidInput(
      "Redfish front upstream",
      options.upstream,
      "an https:// or http:// URL",
    );
  }
  const lies = options.lies ?? new BmcLies();
  const progress = options.progress ?? silentProgress;
  const lieOf = (system: { Id?: unknown; Name?: unknown }) => {
    for (const key of [system.Name, system.Id]) {
      if (typeof key === "string" && lies.lying().includes(key)) return { node: key, lie: lies.of(key) };
    }
    return undefined;
  };

  const forward = (method: string, path: string, headers: IncomingHttpHeaders, body: Buffer) =>
    forwardTo(upstream, options, { method, path, headers, body });

  const answer = async (req: IncomingMessage): Promise<Upstream> => {
    const method = req.method ?? "GET";
    const path = req.url ?? "/";
    const pathname = new URL(path, upstream).pathname;
    const body = await readAll(req, MAX_BODY_BYTES);
    const reset = RESET.exec(pathname);
    if (method === "POST" && reset?.[1] !== undefined) {
      const resetType = (() => {
        try {
          return (JSON.parse(body.toString("utf8")) as { ResetType?: unknown }).ResetType;
        } catch {
          return undefined;
        }
      })();
      if (typeof resetType === "string" && POWER_OFF_RESETS.has(resetType)) {
        // The system as the BMC knows it, asked with the caller's own credentials.
        const system = await forward("GET", `/redfish/v1/Systems/${reset[1]}`, req.headers, Buffer.alloc(0));
        if (system.status !== 200) return system;
        const lying = lieOf(JSON.parse(system.body.toString("utf8")) as { Id?: unknown; Name?: unknown });
        if (lying?.lie.powerOffNoop) {
          progress.info(`Redfish front: ${resetType} of ${lying.node} acknowledged, not done (its BMC lies)`);
          return { status: 204, headers: {}, body: Buffer.alloc(0) };
        }
      }
    }
    const response = await forward(method, path, req.headers, body);
    if (method === "GET" && response.status === 200 && SYSTEM.test(pathname)) {
      let system: Record<string, unknown> | undefined;
      try {
        system = JSON.parse(response.body.toString("utf8")) as Record<string, unknown>;
      } catch {
        system = undefined;
      }
      const lying = system === undefined ? undefined : lieOf(system);
      if (system !== undefined && lying?.lie.powerReadsOff) {
        return { ...response, body: Buffer.from(JSON.stringify({ ...system, PowerState: "Off" })) };
      }
    }
    return response;
  };

  const server = createServer(
    { key: options.tls.key, cert: options.tls.cert },
    (req, res: ServerResponse) => {
      answer(req).then(
        (out) => {
          res.writeHead(out.status, { ...passable(out.headers), "content-length": String(out.body.length) });
          res.end(out.body);
        },
        (error: unknown) => {
          progress.info(`Redfish front: ${req.method ?? ""} ${req.url ?? ""} failed: ${errorMessage(error)}`);
          const text = JSON.stringify({ error: { message: `Redfish front: ${errorMessage(error)}` } });
          res.writeHead(502, { "content-type": "application/json" }).end(text);
        },
      );
    },
  );
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) => {
      reject(
        new RekindleError("COMMAND_FAILED", `Redfish front cannot listen on ${host}:${options.port ?? 0}`, {
          cause: error,
        }),
      );
    });
    server.listen(options.port ?? 0, host, () => {
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      lies.clearAll();
      server.close(() => {
        resolve();
      });
      server.closeAllConnections();
    }));
  return { url: `https://${host}:${port}`, lies, close, [Symbol.asyncDispose]: close };
}
