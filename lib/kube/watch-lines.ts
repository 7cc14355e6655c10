// How a watch's body is read: split into lines on the raw bytes (one per event, as the API server
// writes them), and optionally at most once per period.
//
// At most once per period: a watch of every node Lease carries about 100 small events a second at
// 1000 nodes, each flushed alone, so a reader that takes each as it arrives wakes 100 times a
// second to decrypt it, parse its HTTP chunk and run the caller, every time with cold caches.
// After a read the stream is paused for the period; paused, it stops reading its socket once one
// chunk is buffered (its high-water mark is one byte), the kernel holds what arrives, and the
// resume reads it all at once: one wake-up per period. A quiet stream is read as each event comes.
import type { IncomingMessage } from "node:http";

const NEWLINE = 0x0a;

/** Splits a byte stream into lines (without "\n" or "\r"), across chunk boundaries. */
export class LineSplitter {
  #pending: Buffer | undefined;

  /** The whole lines `chunk` completes, in order; keeps the partial last one for the next chunk. */
  push(chunk: Buffer): string[] {
    const bytes = this.#pending ? Buffer.concat([this.#pending, chunk]) : chunk;
    const lines: string[] = [];
    let start = 0;
    for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
      const stop = end > start && bytes[end - 1] === 0x0d ? end - 1 : end;
      lines.push(bytes.toString("utf8", start, stop));
      start = end + 1;
    }
    this.#pending = start < bytes.length ? bytes.subarray(start) : undefined;
    return lines;
  }

  /** The last line if the stream ended without a newline after it. */
  flush(): string | undefined {
    const rest = this.#pending?.toString("utf8");
    this.#pending = undefined;
    return rest === undefined || rest === "" ? undefined : rest;
  }
}

/** Reads out of turn one readNow makes at most, while each brings more data. */
const MAX_CATCH_UP_ROUNDS = 64;

/**
 * Resolves after the event loop's next poll phase (where sockets are read), wherever it is called:
 * an immediate set in a poll-phase callback (an HTTP response's) runs before the next poll, so a
 * single one may come before the socket is read; the immediate it sets runs after that poll.
 */
function afterPollPhase(): Promise<void> {
  return new Promise<void>((done) => setImmediate(() => setImmediate(done)));
}

/** A stream read at most once per period (readInBatches). */
export interface BatchedReading {
  /**
   * Reads now what the kernel holds, the period notwithstanding: resolves once it was delivered
   * (for a decision that must see every event received so far), however it is called (after a
   * timer or after I/O): it reads again after each poll phase until a read brings nothing more.
   */
  readNow(): Promise<void>;
  /** Ends the batching: the stream flows freely after it. */
  stop(): void;
}

/**
 * Reads `response` at most once per `periodMs` (real time): after each read it is paused for that
 * long, then reads what came meanwhile at once; a quiet stream is read as data comes. Stops the
 * socket's reads while paused only when the request was made with readingOptions (else up to
 * 32 KB are still read as they come).
 */
export function readInBatches(response: IncomingMessage, periodMs: number): BatchedReading {
  let drain: NodeJS.Immediate | undefined;
  let wait: NodeJS.Timeout | undefined;
  /** Reads so far: a read out of turn that brought none found the kernel empty. */
  let reads = 0;
  const afterRead = () => {
    reads += 1;
    if (drain !== undefined || wait !== undefined) return;
    // What this read brought is delivered in this turn of the loop; the pause starts after it.
    drain = setImmediate(() => {
      drain = undefined;
      if (response.destroyed) return;
      response.pause();
      wait = setTimeout(resume, periodMs);
      // A paused stream must not hold the process open.
      wait.unref();
    });
  };
  const resume = () => {
    clearTimeout(wait);
    wait = undefined;
    response.resume();
  };
  response.on("data", afterRead);
  return {
    readNow: async () => {
      // Until a read out of turn brings nothing more (bounded: a stream that never stops is cut off).
      for (let round = 0; round < MAX_CATCH_UP_ROUNDS && !response.destroyed; round += 1) {
        const before = reads;
        resume();
        await afterPollPhase();
        if (reads === before) return;
      }
    },
    stop: () => {
      response.off("data", afterRead);
      clearImmediate(drain);
      resume();
    },
  };
}

/** Request options that let readInBatches stop the socket's reads while paused. */
export function readingOptions(batchMs: number): { highWaterMark?: number } {
  return batchMs > 0 ? { highWaterMark: 1 } : {};
}
