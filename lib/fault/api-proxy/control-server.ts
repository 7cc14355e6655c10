// The proxy's control API, on 127.0.0.1 only, in JSON: GET /status, GET /rules, PUT /rules
// {"rules": [RULE…]} (replaces them; each a rule's text form or a rule object), DELETE /rules.
// Bad rules are answered 400 {error, hint} and change nothing.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { errorMessage, RekindleError } from "../../errors.js";
import { isObject } from "../../util/is-object.js";
import { readBoundedBody } from "../../util/request-body.js";
import type { ApiProxy } from "./types.js";

/** A PUT /rules body longer than this is refused (413). */
const MAX_BODY_BYTES = 256 * 1024;

export interface ControlServer {
  url: string;
  close(): Promise<void>;
}

function answer(res: ServerResponse, code: number, value: unknown): void {
  res.writeHead(code, { "content-type": "application/json" }).end(`${JSON.stringify(value, null, 2)}\n`);
}

function refusal(error: unknown): { error: string; hint?: string } {
  const hint = error instanceof RekindleError ? error.hint : undefined;
  return { error: errorMessage(error), ...(hint !== undefined ? { hint } : {}) };
}

async function putRules(
  proxy: Pick<ApiProxy, "setRules">,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const text = await readBoundedBody(req, MAX_BODY_BYTES);
  if (text === undefined) {
    answer(res, 413, { error: `the body is longer than ${MAX_BODY_BYTES} bytes` });
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    answer(res, 400, {
      error: `the body is not JSON: ${errorMessage(error)}`,
      hint: '{"rules": ["freeze,leases"]}',
    });
    return;
  }
  const rules = isObject(body) ? body["rules"] : undefined;
  if (!Array.isArray(rules)) {
    answer(res, 400, { error: "the body has no rules list", hint: '{"rules": ["freeze,leases"]}' });
    return;
  }
  try {
    answer(res, 200, proxy.setRules(rules as unknown[] as string[]));
  } catch (error) {
    answer(res, 400, refusal(error));
  }
}

async function route(
  proxy: Pick<ApiProxy, "setRules" | "status">,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = (req.url ?? "/").split("?")[0];
  const method = req.method ?? "GET";
  if (path === "/status" && method === "GET") answer(res, 200, proxy.status());
  else if (path === "/rules" && method === "GET") answer(res, 200, { rules: proxy.status().rules });
  else if (path === "/rules" && method === "PUT") await putRules(proxy, req, res);
  else if (path === "/rules" && method === "DELETE") answer(res, 200, proxy.setRules([]));
  else if (path === "/status" || path === "/rules")
    answer(res, 405, { error: `${method} ${path} is not served` });
  else answer(res, 404, { error: `no ${path}; the control API serves /status and /rules` });
}

/** Serves `proxy`'s control API on 127.0.0.1:`port` (0: a free port). */
export async function startControlServer(
  proxy: Pick<ApiProxy, "setRules" | "status">,
  port: number,
): Promise<ControlServer> {
  const server = createServer((req, res) => {
    route(proxy, req, res).catch((error: unknown) => {
      if (!res.headersSent) answer(res, 500, refusal(error));
    });
  });
  const bound = await new Promise<number>((resolve, reject) => {
    server.once("error", (error) => {
      reject(
        new RekindleError(
          "INVALID_INPUT",
          `the proxy's control API cannot listen on 127.0.0.1:${port}: ${error.message}`,
          {
            cause: error,
          },
        ),
      );
    });
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : port);
    });
  });
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
