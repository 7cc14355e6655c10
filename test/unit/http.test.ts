// lib/util/http.ts: the fence drivers' HTTP client fails clearly (TIMEOUT, ABORTED, an oversized
// answer) and never leaves a promise hanging.
import { expect } from "chai";
import { createServer, type Server } from "node:http";
import { httpRequest } from "../../lib/util/http.js";
import { rekindleRejection } from "../support/assertions.js";

describe("httpRequest: timeouts, cancellation, size cap", function () {
  let server: Server;
  let base = "";

  before(async function () {
    server = createServer((req, res) => {
      if (req.url?.startsWith("/silent")) return; // never answers
      if (req.url === "/trickle") {
        // Headers and a first chunk at once, then silence: an abort lands mid-body.
        res.writeHead(200).write("partial");
        return;
      }
      if (req.url === "/big") {
        res.writeHead(200).end("x".repeat(4096));
        return;
      }
      res.writeHead(200).end("ok");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  });

  after(function () {
    server.closeAllConnections();
    server.close();
  });

  it("answers status and body", async function () {
    expect(await httpRequest("GET", `${base}/`)).to.deep.equal({ status: 200, body: "ok" });
  });

  it("a silent server is a TIMEOUT naming the call, never its credentials", async function () {
    const error = await rekindleRejection(
      httpRequest("POST", `${base.replace("//", "//admin:pw@")}/silent?x=1`, { timeoutMs: 200 }),
    );
    expect(error.code).to.equal("TIMEOUT");
    expect(error.message).to.equal(`POST ${base}/silent timed out after 200 ms`);
  });

  it("an abort before, while waiting, or mid-body is ABORTED with the signal's reason", async function () {
    const before = await rekindleRejection(
      httpRequest("GET", `${base}/`, { signal: AbortSignal.abort("stop") }),
    );
    expect([before.code, before.cause]).to.deep.equal(["ABORTED", "stop"]);
    for (const path of ["/silent", "/trickle"]) {
      const controller = new AbortController();
      setTimeout(() => {
        controller.abort("leadership lost");
      }, 100);
      const error = await rekindleRejection(
        httpRequest("GET", `${base}${path}`, { signal: controller.signal }),
      );
      expect([error.code, error.message, error.cause]).to.deep.equal([
        "ABORTED",
        `GET ${base}${path} aborted`,
        "leadership lost",
      ]);
    }
  });

  it("an answer larger than maxBodyBytes fails", async function () {
    const error = await rekindleRejection(httpRequest("GET", `${base}/big`, { maxBodyBytes: 1024 }));
    expect(error.message).to.equal(`GET ${base}/big answered more than 1024 bytes`);
  });
});
