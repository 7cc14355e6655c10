// What this process (its in-process controller) costs over a window of time: CPU, RSS sampled each
// second, and the API requests it sends (request-counter.ts). The cluster's own processes are
// separate (sim daemons), so the CPU and memory read here are the controller's plus the bench's
// own bookkeeping.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { sleep } from "../lib/util/time.js";
import type { RequestCounter, RequestCounts, RequestKind } from "./request-counter.js";

export interface WindowUsage {
  seconds: number;
  cpuPercentOfOneCore: number;
  /** RSS at the end of the window. */
  rssMB: number;
  /** The highest RSS sampled (each second) during the window. */
  peakRssMB: number;
  /** V8 heap in use at the end of the window. */
  heapUsedMB: number;
}

export interface RequestRates {
  requestsPerSecond: Record<RequestKind, number>;
  bytesPerSecond: number;
  /** Requests by "<kind> <method> <path>" over the whole window. */
  requests: Record<string, number>;
}

const mb = (bytes: number) => Math.round(bytes / 1_000_000);

// A full collection on demand, so a reading of RSS is not of garbage left by what ran before
// (module loading, tsx's transforms): --expose-gc set at run time, gc() taken from a fresh context.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** This process's RSS and V8 heap in use (MB) right after a full collection. */
export function memoryAfterGc(): { rssMB: number; heapUsedMB: number } {
  gc();
  const { rss, heapUsed } = process.memoryUsage();
  return { rssMB: mb(rss), heapUsedMB: mb(heapUsed) };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** Measures CPU and RSS from now until stop() (RSS sampled every second meanwhile). */
export function startWindow(): { stop(): WindowUsage } {
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 1000);
  return {
    stop() {
      clearInterval(timer);
      const { rss, heapUsed } = process.memoryUsage();
      const seconds = (performance.now() - startedAt) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      return {
        seconds: round2(seconds),
        cpuPercentOfOneCore: round2(((cpu.user + cpu.system) / 1000 / (seconds * 1000)) * 100),
        rssMB: mb(rss),
        peakRssMB: mb(Math.max(peak, rss)),
        heapUsedMB: mb(heapUsed),
      };
    },
  };
}

export function requestRates(counts: RequestCounts, seconds: number): RequestRates {
  const perSecond = (n: number) => round2(n / seconds);
  const { WATCH, LIST, GET, WRITE } = counts.byKind;
  return {
    requestsPerSecond: {
      WATCH: perSecond(WATCH),
      LIST: perSecond(LIST),
      GET: perSecond(GET),
      WRITE: perSecond(WRITE),
    },
    bytesPerSecond: Math.round(counts.bytes / seconds),
    requests: counts.byRequest,
  };
}

/** Usage and request rates over `seconds` of rest (nothing else of this process's running). */
export async function measureRest(
  counter: RequestCounter,
  seconds: number,
  signal?: AbortSignal,
): Promise<WindowUsage & RequestRates> {
  const window = startWindow();
  counter.start();
  try {
    await sleep(seconds * 1000, signal);
  } catch (error) {
    counter.stop();
    window.stop();
    throw error;
  }
  const counts = counter.stop();
  const usage = window.stop();
  return { ...usage, ...requestRates(counts, usage.seconds) };
}
