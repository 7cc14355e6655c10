// How a watch's body is read (lib/kube/watch-lines.ts, lib/kube/watch-stream.ts): split into lines
// on the bytes, and, for the controller's Lease watch, read in batches so that a stream of many
// small events wakes the process once per period, not once per event. A real HTTP server on
// loopback writes the events when the test says.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { expect } from "chai";
import { k8s } from "../../lib/kube/client.js";
import { LineSplitter, readInBatches, readingOptions } from "../../lib/kube/watch-lines.js";
import {
  isExpired,
  LIST_PAGE_SIZE,
  listJson,
  openWatch,
  type WatchLine,
} from "../../lib/kube/watch-stream.js";
import { sleep } from "../../lib/util/time.js";
import { until } from "../support/until.js";

/** A server whose one watch response the test writes to. */
interface StreamServer {
  url: string;
  kc: k8s.KubeConfig;
  /** The open watch response, once a client asked. */
  response: () => Promise<ServerResponse>;
  close(): Promise<void>;
}

async function startStreamServer(): Promise<StreamServer> {
  let answer: (res: ServerResponse) => void = () => undefined;
  const opened = new Promise<ServerResponse>((resolve) => {
    answer = resolve;
  });
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
    answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "s", server: url, skipTLSVerify: true }],
    users: [{ name: "u", token: "t" }],
    contexts: [{ name: "c", cluster: "s", user: "u" }],
    currentContext: "c",
  });
  return {
    url,
    kc,
    response: () => opened,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

const event = (n: number) =>
  `${JSON.stringify({ type: "MODIFIED", object: { metadata: { name: `n${n}` } } })}\n`;

describe("watch bodies: lines on the bytes", function () {
  it("splits lines across chunks, drops a CR before LF, and keeps a split multi-byte character whole", function () {
    const splitter = new LineSplitter();
    const text = Buffer.from('{"a":"é"}\r\n{"b":2}\n{"c":', "utf8");
    const at = text.indexOf(0xc3) + 1; // between the two bytes of "é"
    expect(splitter.push(text.subarray(0, at))).to.deep.equal([]);
    expect(splitter.push(text.subarray(at))).to.deep.equal(['{"a":"é"}', '{"b":2}']);
    expect(splitter.push(Buffer.from("3}\n\n"))).to.deep.equal(['{"c":3}', ""]);
    expect(splitter.flush()).to.equal(undefined);
    splitter.push(Buffer.from('{"d":4}'));
    expect(splitter.flush()).to.equal('{"d":4}');
  });
});

describe("watch bodies: read in batches", function () {
  this.timeout(20_000);
  let server: StreamServer;
  beforeEach(async function () {
    server = await startStreamServer();
  });
  afterEach(async function () {
    await server.close();
  });

  it("a quiet stream is read at once; after a read, the socket reads nothing for the period (the kernel holds it), then all at once", async function () {
    const req = request(server.url, { ...readingOptions(300), method: "GET" });
    req.end();
    const response = await new Promise<IncomingMessage>((resolve) => req.once("response", resolve));
    let received = "";
    // What the stream did, in order: a read held for a period shows as a pause before the data.
    const order: string[] = [];
    response.on("pause", () => order.push("pause"));
    response.setEncoding("utf8");
    response.on("data", (chunk: string) => {
      order.push("data");
      received += chunk;
    });
    const reading = readInBatches(response, 300);
    try {
      const res = await server.response();
      res.write(event(0));
      await until(() => received === event(0), "the first event");
      expect(order.slice(0, order.indexOf("data")), "what came before the first read").to.not.include(
        "pause",
      );
      await until(() => response.isPaused(), "the pause after the read");
      const before = response.socket.bytesRead;
      for (let n = 1; n <= 10; n += 1) {
        res.write(event(n));
        await sleep(5);
      }
      // One chunk may be taken before the socket stops; ten are not.
      expect(response.socket.bytesRead - before).to.be.lessThan(3 * event(0).length);
      await until(() => received.split("\n").length > 11, "the ten events");
      expect(received).to.equal(Array.from({ length: 11 }, (_, n) => event(n)).join(""));
    } finally {
      reading.stop();
      req.destroy();
    }
  });

  it("openWatch with batchMs delivers every event, in order, in a few bursts instead of one per event", async function () {
    const stop = new AbortController();
    const lines: { line: WatchLine; atMs: number }[] = [];
    const opened = await openWatch(
      server.kc,
      "/api/v1/things",
      {},
      stop.signal,
      (line) => lines.push({ line, atMs: performance.now() }),
      { batchMs: 200 },
    );
    try {
      const res = await server.response();
      for (let n = 0; n < 30; n += 1) {
        // The last one split in two writes: a line across chunks.
        if (n === 29) {
          res.write(event(n).slice(0, 10));
          await sleep(5);
          res.write(event(n).slice(10));
        } else res.write(event(n));
        await sleep(10);
      }
      await until(() => lines.length === 30, "30 events");
      expect(
        lines.map(({ line }) => (line.object as { metadata: { name: string } }).metadata.name),
      ).to.deep.equal(Array.from({ length: 30 }, (_, n) => `n${n}`));
      // 30 events over about 0.4 s, read every 200 ms: a handful of bursts, each a single moment.
      let bursts = 1;
      for (let i = 1; i < lines.length; i += 1) {
        if ((lines[i]?.atMs ?? 0) - (lines[i - 1]?.atMs ?? 0) > 20) bursts += 1;
      }
      expect(bursts).to.be.at.most(8);
      res.end();
      await opened.ended;
    } finally {
      stop.abort(new Error("test over"));
    }
  });

  it("readNow delivers what a paused watch holds, out of turn, before it resolves", async function () {
    const stop = new AbortController();
    const names: string[] = [];
    const opened = await openWatch(
      server.kc,
      "/api/v1/things",
      {},
      stop.signal,
      (line) => names.push((line.object as { metadata: { name: string } }).metadata.name),
      { batchMs: 60_000 },
    );
    try {
      const res = await server.response();
      res.write(event(1));
      await until(() => names.length === 1, "the first event (a quiet stream is read at once)");
      res.write(event(2));
      await sleep(100);
      expect(names, "held until the next read, a minute away").to.deep.equal(["n1"]);
      await opened.readNow();
      expect(names).to.deep.equal(["n1", "n2"]);
    } finally {
      stop.abort(new Error("test over"));
    }
  });

  it("readNow right after an HTTP response (I/O, not a timer) delivers every event already received", async function () {
    // The events are written before the other request is answered, on loopback: by the time its
    // response is read, they sit in the watch socket's kernel buffer.
    const other = createServer((_req, res) => res.end("ok"));
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const address = other.address();
    const otherUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    const stop = new AbortController();
    const names: string[] = [];
    const opened = await openWatch(
      server.kc,
      "/api/v1/things",
      {},
      stop.signal,
      (line) => names.push((line.object as { metadata: { name: string } }).metadata.name),
      { batchMs: 60_000 },
    );
    try {
      const res = await server.response();
      res.write(event(0));
      await until(() => names.length === 1, "the first event (a quiet stream is read at once)");
      await sleep(50);
      for (let n = 1; n <= 4; n += 1) {
        res.write(event(n));
        await sleep(5);
      }
      expect(names, "held: the next read is a minute away").to.deep.equal(["n0"]);
      const delivered = await new Promise<string[]>((resolve, reject) => {
        const req = request(otherUrl, (answer) => {
          answer.resume();
          answer.on("end", () => {
            // In the callback of I/O: the read out of turn must still wait for the socket's read.
            void opened.readNow().then(() => {
              resolve([...names]);
            }, reject);
          });
        });
        req.on("error", reject);
        req.end();
      });
      expect(delivered).to.deep.equal(["n0", "n1", "n2", "n3", "n4"]);
    } finally {
      stop.abort(new Error("test over"));
      other.closeAllConnections();
      await new Promise<void>((resolve) =>
        other.close(() => {
          resolve();
        }),
      );
    }
  });

  it("openWatch without batchMs delivers each event as it comes, and ends when the server ends", async function () {
    const stop = new AbortController();
    const lines: WatchLine[] = [];
    const opened = await openWatch(server.kc, "/api/v1/things", {}, stop.signal, (line) => lines.push(line));
    try {
      const res = await server.response();
      res.write(event(1));
      await until(() => lines.length === 1, "the first event");
      res.write("not json\n\n");
      res.end(event(2).trimEnd()); // the last line without its newline
      await opened.ended;
      expect(lines.map((l) => l.type)).to.deep.equal(["MODIFIED", "MODIFIED"]);
    } finally {
      stop.abort(new Error("test over"));
    }
  });
});

describe("LISTs in pages (limit/continue)", function () {
  let server: Server;
  let kc: k8s.KubeConfig;
  const asked: string[] = [];
  let expire = false;

  before(async function () {
    const names = Array.from({ length: 7 }, (_, n) => `n${n}`);
    server = createServer((req, res) => {
      const query = new URL(req.url ?? "", "http://x").searchParams;
      asked.push(`limit=${query.get("limit") ?? ""} continue=${query.get("continue") ?? ""}`);
      const start = Number(query.get("continue") || "0");
      if (expire && start > 0) {
        res.writeHead(410, { "content-type": "application/json" });
        res.end(JSON.stringify({ kind: "Status", code: 410, reason: "Expired" }));
        return;
      }
      const limit = Number(query.get("limit") || "1000");
      const page = names.slice(start, start + limit);
      const next = start + limit < names.length ? String(start + limit) : "";
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          // A later page's resourceVersion would differ if the server sent one: the first's holds.
          metadata: { resourceVersion: start === 0 ? "42" : "99", continue: next },
          items: page.map((name) => ({ metadata: { name } })),
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: "s",
          server: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
          skipTLSVerify: true,
        },
      ],
      users: [{ name: "u", token: "t" }],
      contexts: [{ name: "c", cluster: "s", user: "u" }],
      currentContext: "c",
    });
  });

  after(async function () {
    server.closeAllConnections();
    await new Promise<void>((resolve) =>
      server.close(() => {
        resolve();
      }),
    );
  });

  beforeEach(function () {
    asked.length = 0;
    expire = false;
  });

  it("asks page after page until no continue token, and returns every item with the first page's resourceVersion", async function () {
    const list = await listJson(kc, "/api/v1/things", {}, AbortSignal.timeout(5_000), 3);
    expect(list.items.map((i) => (i as { metadata: { name: string } }).metadata.name)).to.deep.equal([
      "n0",
      "n1",
      "n2",
      "n3",
      "n4",
      "n5",
      "n6",
    ]);
    expect(list.resourceVersion).to.equal("42");
    expect(asked).to.deep.equal(["limit=3 continue=", "limit=3 continue=3", "limit=3 continue=6"]);
  });

  it("pages of LIST_PAGE_SIZE by default; an expired continue token is a 410 the caller relists on", async function () {
    await listJson(kc, "/api/v1/things", {}, AbortSignal.timeout(5_000));
    expect(asked).to.deep.equal([`limit=${LIST_PAGE_SIZE} continue=`]);
    expire = true;
    const error = await listJson(kc, "/api/v1/things", {}, AbortSignal.timeout(5_000), 2).catch(
      (e: unknown) => e,
    );
    expect(isExpired(error), String(error)).to.equal(true);
  });
});
