// One WATCH request as a stream of events, sent with node's http(s) and the kubeconfig's own agent
// and headers. Not client-node's Watch: its request takes no signal of ours (it sets its own), so a
// WATCH to an API server that stopped answering cannot be abandoned before the server answers, and
// it neither asks for bookmarks nor says when the server answered.
import http from "node:http";
import https from "node:https";
import { RekindleError } from "../errors.js";
import { k8s } from "./client.js";
import { LineSplitter, readInBatches, readingOptions, type BatchedReading } from "./watch-lines.js";

/** One line of a watch stream: ADDED, MODIFIED, DELETED, BOOKMARK or ERROR, and its object. */
export interface WatchLine {
  type: string;
  object: unknown;
}

/**
 * A LIST or WATCH the server answered with an error status (410 Gone: the resourceVersion is too
 * old), as client-node's ApiException so that every caller classifies it alike.
 */
export class WatchStatusError extends k8s.ApiException<string> {
  constructor(code: number, message: string, body = "") {
    super(code, message, body, {});
    this.name = "WatchStatusError";
  }
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}

/** The watch's resourceVersion is too old (HTTP 410, or an ERROR event with code 410): relist. */
export function isExpired(error: unknown): boolean {
  return error instanceof WatchStatusError && error.code === 410;
}

export interface OpenedWatch {
  /** Resolves when the server ends the stream (or the signal aborts); rejects on a broken connection. */
  ended: Promise<void>;
  /**
   * Delivers now every event received so far, and resolves after: at once for a stream read as
   * events arrive, a read out of turn for one read in batches (WatchReading.batchMs).
   */
  readNow(): Promise<void>;
}

/** The request options for `path?query` on the kubeconfig's cluster, with its agent and credentials. */
export async function requestFor(
  kc: k8s.KubeConfig,
  path: string,
  query: Readonly<Record<string, string>>,
): Promise<{ url: URL; options: https.RequestOptions; send: typeof https.request }> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new RekindleError("INVALID_INPUT", "the kubeconfig has no current cluster");
  const url = new URL(cluster.server.replace(/\/+$/, "") + path);
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  const options: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  return { url, options, send: url.protocol === "http:" ? http.request : https.request };
}

/** Objects a LIST asks for per page (limit/continue) unless told otherwise. */
export const LIST_PAGE_SIZE = 500;

/** One page of a LIST: its items, the list's resourceVersion, and the token of the next page. */
async function listPage(
  kc: k8s.KubeConfig,
  path: string,
  query: Readonly<Record<string, string>>,
  signal: AbortSignal,
): Promise<{ items: unknown[]; resourceVersion: string; continueToken: string }> {
  const { url, options, send } = await requestFor(kc, path, query);
  const body = await new Promise<string>((resolve, reject) => {
    const request = send(url, { ...options, method: "GET", signal }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("error", reject);
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        if (response.statusCode === 200) resolve(text);
        else
          reject(
            new WatchStatusError(
              response.statusCode ?? 0,
              `LIST ${path}: HTTP ${response.statusCode ?? 0} ${text.slice(0, 500)}`,
            ),
          );
      });
    });
    request.on("error", (error) => {
      reject(signal.aborted ? asError(signal.reason) : error);
    });
    request.end();
  });
  const parsed = JSON.parse(body) as {
    items?: unknown[] | null;
    metadata?: { resourceVersion?: string; continue?: string };
  };
  return {
    items: parsed.items ?? [],
    resourceVersion: parsed.metadata?.resourceVersion ?? "",
    continueToken: parsed.metadata?.continue ?? "",
  };
}

/**
 * A LIST as the API server sends it (JSON, times as strings, as a watch's events carry them:
 * client-node's typed lists turn them into Dates), in pages of `pageSize` objects (limit/continue:
 * a large LIST neither holds the API server to one huge answer nor arrives as one huge body), ended
 * at `signal`. A continue token that expired is a 410 (WatchStatusError): the caller lists again.
 */
export async function listJson(
  kc: k8s.KubeConfig,
  path: string,
  query: Readonly<Record<string, string>>,
  signal: AbortSignal,
  pageSize = LIST_PAGE_SIZE,
): Promise<{ items: unknown[]; resourceVersion: string }> {
  const items: unknown[] = [];
  let resourceVersion = "";
  let continueToken = "";
  do {
    const pageQuery: Record<string, string> = { ...query, limit: String(pageSize) };
    if (continueToken !== "") pageQuery["continue"] = continueToken;
    const page = await listPage(kc, path, pageQuery, signal);
    items.push(...page.items);
    // Every page carries the resourceVersion of the first: the list's snapshot.
    if (resourceVersion === "") resourceVersion = page.resourceVersion;
    continueToken = page.continueToken;
  } while (continueToken !== "");
  return { items, resourceVersion };
}

export interface WatchReading {
  /**
   * Read the stream at most once per this many ms (watch-lines.ts): events of a busy stream are
   * then received up to this late, in bursts, for far fewer wake-ups; a quiet one's as they come.
   * 0 (the default): every event as it arrives.
   */
  batchMs?: number;
}

/** One line of a watch body as an event, or undefined for a blank or malformed line. */
function watchLineOf(text: string): WatchLine | undefined {
  if (text.trim() === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null || !("type" in parsed)) return undefined;
  const { type, object } = parsed as { type: unknown; object: unknown };
  return typeof type === "string" ? { type, object } : undefined;
}

/**
 * Sends `GET path?watch=true&…query` and resolves once the server answered 200: events then go to
 * `onLine` until `ended`. Rejects when the server answers otherwise (a WatchStatusError), when the
 * connection fails, or when `signal` aborts first.
 */
export async function openWatch(
  kc: k8s.KubeConfig,
  path: string,
  query: Readonly<Record<string, string>>,
  signal: AbortSignal,
  onLine: (line: WatchLine) => void,
  reading: WatchReading = {},
): Promise<OpenedWatch> {
  const batchMs = reading.batchMs ?? 0;
  const { url, options, send } = await requestFor(kc, path, { ...query, watch: "true" });
  return new Promise<OpenedWatch>((resolve, reject) => {
    const requestOptions = { ...options, ...readingOptions(batchMs), method: "GET", signal };
    const request = send(url, requestOptions, (response) => {
      if (response.statusCode !== 200) {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8").slice(0, 500);
          reject(
            new WatchStatusError(
              response.statusCode ?? 0,
              `WATCH ${path}: HTTP ${response.statusCode ?? 0} ${body}`,
            ),
          );
        });
        response.on("error", reject);
        return;
      }
      let batches: BatchedReading | undefined;
      const ended = new Promise<void>((done, fail) => {
        const lines = new LineSplitter();
        const deliver = (text: string) => {
          const line = watchLineOf(text);
          if (line) onLine(line);
        };
        response.on("data", (chunk: Buffer) => {
          for (const text of lines.push(chunk)) deliver(text);
        });
        batches = batchMs > 0 ? readInBatches(response, batchMs) : undefined;
        response.on("end", () => {
          const rest = lines.flush();
          if (rest !== undefined) deliver(rest);
        });
        response.on("error", (error: Error) => {
          if (signal.aborted) done();
          else fail(error);
        });
        response.on("close", () => {
          batches?.stop();
          if (signal.aborted || response.complete) done();
          else fail(new Error(`WATCH ${path}: connection closed mid-stream`));
        });
      });
      // Nobody may be waiting on `ended` when the caller abandons the watch.
      ended.catch(() => undefined);
      resolve({ ended, readNow: () => batches?.readNow() ?? Promise.resolve() });
    });
    request.on("error", reject);
    request.end();
  });
}
