// Process entry of the sim's clock-skew webhook (started by clock-webhook.ts as the
// "sim-clock-webhook" component): answers kube-apiserver's AdmissionReviews for the skewed nodes'
// Lease and node status writes with the shift (clock-skew.ts). The skew is in the request path,
// so the process holds no state: the MutatingWebhookConfiguration is the one truth.
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import { parseArgs } from "node:util";
import { readBoundedBody } from "../../../util/request-body.js";
import { admissionResponse, parseSkewPath, type AdmissionRequest } from "./clock-skew.js";

const { values } = parseArgs({
  options: { port: { type: "string" }, cert: { type: "string" }, key: { type: "string" } },
});
if (!values.port || !values.cert || !values.key) {
  process.stderr.write("usage: clock-webhook-main --port=N --cert=PEM --key=PEM\n");
  process.exit(2);
}
const log = (m: string) => process.stdout.write(`${new Date().toISOString()} ${m}\n`);

/** Largest AdmissionReview accepted (a Node with many images is tens of kB). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

const server = createServer(
  { cert: readFileSync(values.cert), key: readFileSync(values.key) },
  (req, res) => {
    const path = new URL(req.url ?? "/", "https://127.0.0.1").pathname;
    if (req.method === "GET" && path === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      return;
    }
    const skew = parseSkewPath(path);
    if (req.method !== "POST" || skew === undefined) {
      res.writeHead(404).end();
      return;
    }
    void readBoundedBody(req, MAX_BODY_BYTES).then(
      (body) => {
        try {
          if (body === undefined) throw new Error(`AdmissionReview over ${MAX_BODY_BYTES} bytes`);
          const review = JSON.parse(body) as { request?: AdmissionRequest };
          if (!review.request) throw new Error("AdmissionReview without a request");
          const answer = admissionResponse(review.request, skew);
          if (answer.response.patch !== undefined) {
            const kind = review.request.kind?.kind ?? "?";
            const patch = Buffer.from(answer.response.patch, "base64").toString("utf8");
            log(`${kind} ${review.request.subResource ?? ""} offset ${skew.offsetMs} ms: ${patch}`);
          }
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
        } catch (error) {
          log(`bad request: ${error instanceof Error ? error.message : String(error)}`);
          res.writeHead(400).end();
        }
      },
      (error: unknown) => {
        log(`request dropped: ${error instanceof Error ? error.message : String(error)}`);
        res.destroy();
      },
    );
  },
);
server.listen(Number(values.port), "127.0.0.1", () => {
  log(`listening on https://127.0.0.1:${values.port}`);
});
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    server.close();
    process.exit(0);
  });
}
