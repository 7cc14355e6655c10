// The floor under the recovery controller's CPU at rest (issue 25 item 8): what it costs a node
// process only to receive the node Leases' watch, with the controller's own watch reader
// (lib/kube/watch-stream.ts: HTTPS, line splitting, JSON.parse) and nothing else. At 1000 nodes
// every kubelet renews every 10 s: about 100 small events a second, each its own chunk. Compared
// with the shipped controller's CPU at rest (bench:controller), the rest is the controller's own.
// Runs against a cluster that is up, e.g. `rekindle up --provider sim --workers 1000 --profile large`.
//
// --readers splits that floor by layer, each reader opening the same watch alone in turn (rounds
// interleaved, so drift over the run falls on every reader alike):
//   watch    the controller's reader (HTTPS, line splitting, JSON.parse, one callback per event),
//            every event read as it arrives;
//   batched  the same, read at most every 250 ms as the controller reads the Lease watch
//            (--lease-read-interval's default);
//   https    node's https client, body chunks counted and dropped (no lines, no JSON);
//   tls      a bare TLS socket with the request written by hand, bytes counted (no HTTP parsing).
//
//   npx tsx bench/watch-floor.ts --kubeconfig K [--seconds 60] [--warmup 15] [--runs 3]
//       [--readers watch,https,tls] [--machine TEXT] [--out bench/results/F.json]
import type http from "node:http";
import https from "node:https";
import tls from "node:tls";
import { cpus, totalmem } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_CONTROLLER_CONFIG } from "../lib/controller/config.js";
import { RekindleError } from "../lib/errors.js";
import { type k8s, loadKubeConfig } from "../lib/kube/client.js";
import { openWatch, requestFor } from "../lib/kube/watch-stream.js";
import { parseCountIn } from "../lib/util/parse-count.js";
import { sleep } from "../lib/util/time.js";
import { runBenchMain } from "./bench-main.js";
import { startWindow } from "./process-window.js";
import { benchProvenance } from "./provenance.js";
import { writeResultsFile } from "./results-file.js";

const LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";

const READERS = ["watch", "batched", "https", "tls"] as const;
type Reader = (typeof READERS)[number];

/** An open Lease watch read by one reader: what it has received so far, and how to close it. */
interface OpenReader {
  received: () => number;
  close: () => void;
}

/** The controller's reader: one callback per event, the stream read at most every `batchMs` (0: as it comes). */
async function openControllerReader(kc: k8s.KubeConfig, batchMs = 0): Promise<OpenReader> {
  const stop = new AbortController();
  let events = 0;
  const opened = await openWatch(
    kc,
    LEASES,
    { allowWatchBookmarks: "true" },
    stop.signal,
    (line) => {
      if (line.type !== "BOOKMARK") events += 1;
    },
    { batchMs },
  );
  opened.ended.catch(() => undefined);
  return {
    received: () => events,
    close: () => {
      stop.abort(new Error("done"));
    },
  };
}

/** node's https client alone: body chunks counted (one per event as the server flushes them). */
async function openHttpsReader(kc: k8s.KubeConfig): Promise<OpenReader> {
  const { url, options } = await requestFor(kc, LEASES, { watch: "true" });
  let chunks = 0;
  const request = https.request(url, { ...options, method: "GET" });
  request.end();
  const response = await new Promise<http.IncomingMessage>((done, fail) => {
    request.once("response", done);
    request.once("error", fail);
  });
  request.on("error", () => undefined);
  if (response.statusCode !== 200) {
    request.destroy();
    throw new RekindleError("PRECONDITION", `WATCH ${LEASES}: HTTP ${response.statusCode ?? 0}`);
  }
  response.on("data", () => {
    chunks += 1;
  });
  return {
    received: () => chunks,
    close: () => {
      request.destroy();
    },
  };
}

/** A bare TLS socket with the kubeconfig's credentials: reads counted, nothing parsed. */
async function openTlsReader(kc: k8s.KubeConfig): Promise<OpenReader> {
  const { url, options } = await requestFor(kc, LEASES, { watch: "true" });
  const headers = Object.entries(options.headers ?? {})
    .map(([name, value]) => `${name}: ${String(value)}\r\n`)
    .join("");
  const socket = tls.connect({
    host: url.hostname,
    port: Number(url.port || 443),
    ...(options.ca ? { ca: options.ca } : {}),
    ...(options.cert ? { cert: options.cert } : {}),
    ...(options.key ? { key: options.key } : {}),
  });
  socket.on("error", () => undefined);
  await new Promise<void>((done, fail) => {
    socket.once("secureConnect", done);
    socket.once("error", fail);
  });
  let reads = 0;
  const answered = new Promise<string>((done) => {
    socket.once("data", (chunk: Buffer) => {
      done(chunk.toString("latin1", 0, 32));
    });
  });
  socket.on("data", () => {
    reads += 1;
  });
  socket.write(
    `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: application/json\r\n${headers}\r\n`,
  );
  const statusLine = await answered;
  if (!statusLine.startsWith("HTTP/1.1 200")) {
    socket.destroy();
    throw new RekindleError("PRECONDITION", `WATCH ${LEASES}: ${statusLine.split("\r\n")[0] ?? ""}`);
  }
  return {
    received: () => reads,
    close: () => {
      socket.destroy();
    },
  };
}

const OPENERS: Record<Reader, (kc: k8s.KubeConfig) => Promise<OpenReader>> = {
  watch: (kc) => openControllerReader(kc),
  batched: (kc) => openControllerReader(kc, DEFAULT_CONTROLLER_CONFIG.leaseReadIntervalMs),
  https: openHttpsReader,
  tls: openTlsReader,
};

function parseReaders(text: string): Reader[] {
  const names = text.split(",").map((name) => name.trim());
  const unknown = names.filter((name) => !(READERS as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length === 0) {
    throw new RekindleError("INVALID_INPUT", `--readers: unknown reader ${unknown.join(", ")}`, {
      hint: `a comma-separated list of ${READERS.join(", ")}`,
    });
  }
  return names as Reader[];
}

interface Window {
  seconds: number;
  /** Events (watch), body chunks (https) or socket reads (tls) a second. */
  eventsPerSecond: number;
  cpuPercentOfOneCore: number;
}

/** The process's CPU (% of one core, process-window.ts) and the events received over `seconds`. */
async function window(seconds: number, events: () => number, signal: AbortSignal): Promise<Window> {
  const n0 = events();
  const usage = startWindow();
  await sleep(seconds * 1000, signal);
  const { seconds: elapsed, cpuPercentOfOneCore } = usage.stop();
  return {
    seconds: elapsed,
    eventsPerSecond: Math.round(((events() - n0) / elapsed) * 100) / 100,
    cpuPercentOfOneCore,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: "string" },
      seconds: { type: "string", default: "60" },
      warmup: { type: "string", default: "15" },
      runs: { type: "string", default: "3" },
      readers: { type: "string", default: "watch" },
      machine: { type: "string" },
      out: { type: "string" },
    },
  });
  if (values.kubeconfig === undefined) {
    throw new RekindleError(
      "INVALID_INPUT",
      "--kubeconfig is required: the kubeconfig of a running cluster",
      {
        hint: "e.g. rekindle up --provider sim --workers 1000 --profile large prints one",
      },
    );
  }
  const seconds = parseCountIn("--seconds", values.seconds, { min: 1, max: 3600 });
  const warmup = parseCountIn("--warmup", values.warmup, { min: 1, max: 600 });
  const runs = parseCountIn("--runs", values.runs, { min: 1, max: 20 });
  const readers = parseReaders(values.readers);
  const provenance = benchProvenance();
  const kc = loadKubeConfig(values.kubeconfig);
  const stop = new AbortController();
  process.once("SIGINT", () => {
    stop.abort(new Error("interrupted"));
  });
  const idle: Window[] = [];
  const byReader: Partial<Record<Reader, Window[]>> = {};
  // Idle first: the process's own cost with nothing arriving (timers, the runtime).
  for (let i = 0; i < runs; i += 1) idle.push(await window(seconds, () => 0, stop.signal));
  for (let i = 0; i < runs; i += 1) {
    for (const reader of readers) {
      const open = await OPENERS[reader](kc);
      try {
        await sleep(warmup * 1000, stop.signal);
        (byReader[reader] ??= []).push(await window(seconds, open.received, stop.signal));
      } finally {
        open.close();
      }
    }
  }
  const out = {
    ...provenance,
    machine: {
      cores: cpus().length,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      ...(values.machine ? { what: values.machine } : {}),
    },
    runs,
    secondsPerWindow: seconds,
    idle,
    ...(byReader.watch ? { leaseWatch: byReader.watch } : {}),
    byReader,
  };
  const line = (w: Window) => `${w.cpuPercentOfOneCore} % of a core, ${w.eventsPerSecond} events/s`;
  console.log(`idle: ${idle.map(line).join("; ")}`);
  for (const reader of readers) {
    console.log(`the Lease watch, ${reader} reader: ${(byReader[reader] ?? []).map(line).join("; ")}`);
  }
  if (values.out) {
    await writeResultsFile(resolve(values.out), out);
    console.log(`written to ${values.out}`);
  }
}

// The TLS reader's socket or an agent's keep-alive must not hold the process open: it exits.
await runBenchMain(main);
