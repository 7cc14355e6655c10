// The "BMC" of a kind node: a host-side HTTPS service that powers one kind cluster's node
// containers off and on, speaking the controller's webhook fence protocol
// (lib/controller/drivers/webhook.ts). An in-cluster controller cannot reach the engine socket the
// docker driver needs; it can reach this, at the kind network's gateway, with a token and a CA.
import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import { createServer } from "node:https";
import { isIP, isIPv6 } from "node:net";
import { errorMessage, RekindleError } from "../../../errors.js";
import type { FenceDriver } from "../../../controller/drivers/types.js";
import { silentProgress, type Progress } from "../../../util/progress.js";
import { readBoundedBody } from "../../../util/request-body.js";
import { DockerFenceDriver } from "../fence-driver.js";
import { kindNetworkGateway } from "../network.js";
import { KindNodes } from "../nodes.js";
import { PowerRequestHandler, type PowerResponse } from "./handler.js";
import { servingCertificate, type ServingTls } from "./tls.js";
import type { BmcLies } from "../../bmc-lies.js";

export interface KindPowerWebhookOptions {
  /** The kind cluster whose nodes it powers (the io.x-k8s.kind.cluster label); other names are 404. */
  cluster: string;
  /** Address to listen on. Default: the kind network's gateway (kindNetworkGateway), what pods reach. */
  host?: string;
  /** TCP port. Default 0: a free one (the bound port is in `url`). */
  port?: number;
  /** The bearer token callers must send (RFC 6750 token characters). Default: 32 random bytes, base64url. */
  token?: string;
  /** Serving key and certificate, and the CA that verifies them. Default: a new CA and certificate for `host`. */
  tls?: ServingTls;
  /** One line per power action and per refused caller. Default: silent. */
  progress?: Progress;
  /** Closes the service when it aborts. */
  signal?: AbortSignal;
  /** What powers the nodes. Default: DockerFenceDriver (the engine testcontainers finds). */
  driver?: FenceDriver;
  /**
   * The nodes it may power. Default: the cluster's workers (kind's role label), never its control
   * plane; null: every node the driver finds (tests with a fake driver).
   */
  powerableNodes?: (() => Promise<readonly string[]>) | null;
  /** What each node's BMC lies about, read at every request (set and cleared by the caller). Default: none lies. */
  lies?: BmcLies;
}

export interface KindPowerWebhook extends AsyncDisposable {
  /** https://<host>:<port>, the webhook driver's `url` option. */
  readonly url: string;
  /** PEM of the CA that verifies the service: the driver's `caFile` content. */
  readonly caPem: string;
  /** The bearer token: the `token` key of the driver's Secret. */
  readonly token: string;
  /** Stops listening, waits for running power actions, drops every connection. Idempotent. */
  close(): Promise<void>;
}

/** Longest request body read (a request is `{"node": "<name>"}`). */
const MAX_BODY_BYTES = 16 * 1024;
/** A caller that has not sent its whole request by then is dropped. */
const REQUEST_TIMEOUT_MS = 30_000;
/** RFC 6750's b64token: what may follow "Bearer " in a header. */
const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

function send(res: ServerResponse, response: PowerResponse): void {
  res.writeHead(response.status, response.headers).end(`${JSON.stringify(response.body)}\n`);
}

/** Starts the service; resolves once it listens. */
export async function startKindPowerWebhook(options: KindPowerWebhookOptions): Promise<KindPowerWebhook> {
  const { cluster } = options;
  if (cluster === "") throw RekindleError.invalidInput("kind cluster name", cluster, "a kind cluster's name");
  const token = options.token ?? randomBytes(32).toString("base64url");
  if (!TOKEN.test(token)) {
    throw new RekindleError(
      "INVALID_INPUT",
      "the power webhook's token has characters a bearer token cannot carry",
      {
        hint: "letters, digits and - . _ ~ + / (then = padding), as RFC 6750 allows",
      },
    );
  }
  options.signal?.throwIfAborted();
  const host = options.host ?? (await kindNetworkGateway());
  const tls = options.tls ?? (await certificateFor(host, options.signal));
  const progress = options.progress ?? silentProgress;
  const handler = new PowerRequestHandler({
    cluster,
    token,
    driver: options.driver ?? new DockerFenceDriver(),
    progress,
    ...(options.lies ? { lies: options.lies } : {}),
    ...(options.powerableNodes !== null
      ? { powerableNodes: options.powerableNodes ?? (() => new KindNodes(cluster).workers()) }
      : {}),
  });

  const server = createServer(
    { key: tls.key, cert: tls.cert, requestTimeout: REQUEST_TIMEOUT_MS },
    (req, res) => {
      void (async () => {
        try {
          const body = await readBoundedBody(req, MAX_BODY_BYTES);
          if (body === undefined) {
            send(res, {
              status: 413,
              headers: { "content-type": "application/json", connection: "close" },
              body: { error: `request body over ${MAX_BODY_BYTES} bytes` },
            });
            return;
          }
          send(
            res,
            await handler.handle({
              method: req.method ?? "",
              url: req.url ?? "/",
              authorization: req.headers.authorization,
              body,
            }),
          );
        } catch (error) {
          // A caller that went away mid-request: nothing to answer.
          progress.info(`kind power webhook: request dropped: ${errorMessage(error)}`);
          res.destroy();
        }
      })();
    },
  );
  await listen(server, host, options.port ?? 0);
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  const url = `https://${isIPv6(host) ? `[${host}]` : host}:${port}`;
  progress.info(`kind power webhook for cluster ${cluster} listening on ${url}`);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      options.signal?.removeEventListener("abort", onAbort);
      const closed = new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
      server.closeIdleConnections();
      // Requests under way get their answer (a container half stopped helps no one); later ones a
      // 503; then every socket goes.
      await handler.drain();
      server.closeAllConnections();
      await closed;
      progress.info(`kind power webhook for cluster ${cluster} on ${url} closed`);
    })());
  const onAbort = () => void close();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) {
    await close();
    throw new RekindleError("ABORTED", "kind power webhook start aborted", { cause: options.signal.reason });
  }

  return {
    url,
    caPem: tls.ca,
    token,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A new CA and certificate for `host`, which must then be one IP address (pods connect by IP). */
async function certificateFor(host: string, signal: AbortSignal | undefined): Promise<ServingTls> {
  if (isIP(host) === 0 || host === "0.0.0.0" || host === "::") {
    throw new RekindleError(
      "INVALID_INPUT",
      `cannot make a certificate for host ${JSON.stringify(host)}: it names no one address clients connect to`,
      {
        hint: "listen on one IP address (the kind network's gateway), or pass tls with a certificate of your own",
      },
    );
  }
  return servingCertificate({ ips: [host], ...(signal ? { signal } : {}) });
}

function listen(server: ReturnType<typeof createServer>, host: string, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      server.close();
      const hints: Record<string, string> = {
        EADDRINUSE: "pick another port, or 0 for any free one",
        EADDRNOTAVAIL:
          "no interface of this machine has that address (is the kind network's bridge on another host?)",
      };
      const hint = error.code === undefined ? undefined : hints[error.code];
      reject(
        new RekindleError(
          error.code === "EADDRINUSE" ? "CONFLICT" : "COMMAND_FAILED",
          `kind power webhook cannot listen on ${host}:${port}: ${error.code ?? error.message}`,
          { cause: error, ...(hint ? { hint } : {}) },
        ),
      );
    };
    server.once("error", failed);
    server.listen(port, host, () => {
      server.off("error", failed);
      resolve();
    });
  });
}
