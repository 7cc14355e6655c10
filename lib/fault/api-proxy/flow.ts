// One request through the proxy, from the client's request to the end of the apiserver's answer,
// under the rules as they stand: the first matching rule decides at arrival (drop the write,
// close at once, delay it), and while the answer flows the rules are asked again at every step,
// so setting or clearing a rule acts on the streams already open (freeze holds them, bookmarks
// filters their events, close ends them).
import type { ClientRequest, IncomingMessage, ServerResponse } from "node:http";
import { errorMessage } from "../../errors.js";
import { downstreamResponseHeaders, upstreamRequestHeaders } from "./headers.js";
import { describeTarget, requestTarget, type RequestTarget } from "./request-target.js";
import { decidingRule, type DropAnswer, type FaultAction, type FaultRule } from "./rules.js";
import type { Upstream } from "./upstream.js";

export const FLOW_STATES = ["delayed", "forwarding", "frozen", "dropped"] as const;
export type FlowState = (typeof FLOW_STATES)[number];

export interface ProxyCounters {
  /** Requests the proxy received. */
  requests: number;
  /** Writes answered without going upstream (drop-writes). */
  droppedWrites: number;
  /** Streams and requests the proxy closed (close). */
  closed: number;
  /** Requests sent upstream late (delay). */
  delayed: number;
  /** Watch events not forwarded (bookmarks). */
  filteredEvents: number;
  /** Requests the apiserver could not be asked (connection or TLS failures): answered 502. */
  upstreamErrors: number;
}

export interface FlowContext {
  upstream: Upstream;
  rules(): readonly FaultRule[];
  counters: ProxyCounters;
  log(line: string): void;
  done(flow: Flow): void;
}

export interface FlowStatus {
  id: number;
  method: string;
  /** describeTarget's form; the path for a request that names no resource. */
  target: string;
  verb: string;
  state: FlowState;
  startedAt: string;
}

interface Queued {
  chunk: Buffer;
  due: number;
}

const NEWLINE = 0x0a;

/** Whether a JSON watch line is a BOOKMARK event (a line that is not JSON is not). */
function isBookmark(line: Buffer): boolean {
  try {
    const event = JSON.parse(line.toString("utf8")) as { type?: unknown };
    return event.type === "BOOKMARK";
  } catch {
    return false;
  }
}

/** A Kubernetes Status body, as the apiserver words an error. */
export function statusBody(code: number, reason: string, message: string): string {
  return JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
    code,
  });
}

export class Flow {
  readonly target: RequestTarget | undefined;
  readonly startedAt = new Date();
  state: FlowState = "forwarding";
  private upstreamReq: ClientRequest | undefined;
  private upstreamRes: IncomingMessage | undefined;
  private upstreamEnded = false;
  private finished = false;
  private awaitingDrain = false;
  private partial: Buffer = Buffer.alloc(0);
  private readonly queue: Queued[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly id: number,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly context: FlowContext,
  ) {
    this.target = requestTarget(req.method ?? "GET", req.url ?? "/");
    res.on("close", () => {
      this.finish();
    });
  }

  private get watch(): boolean {
    return this.target?.verb === "watch";
  }

  /** Decides the request by the first rule that matches it now, and goes on with it. */
  start(): void {
    this.context.counters.requests++;
    const action = decidingRule(this.context.rules(), this.target)?.rule.action;
    if (action?.type === "drop-writes") this.drop(action.answer);
    else if (action?.type === "close" && action.streams !== "open") this.closeAtOnce();
    else if (action?.type === "delay" && action.ms > 0) {
      this.state = "delayed";
      this.context.counters.delayed++;
      this.timer = setTimeout(() => {
        void this.forward();
      }, action.ms);
    } else void this.forward();
  }

  /** The rules changed: a close ends it now, a released hung write is answered, the rest flows on. */
  rulesChanged(): void {
    if (this.finished) return;
    const action = decidingRule(this.context.rules(), this.target)?.rule.action;
    if (action?.type === "close" && action.streams !== "new") {
      this.closeNow();
      return;
    }
    if (this.state === "dropped") {
      if (action?.type !== "drop-writes" || action.answer !== "hang") this.answerDropped();
      return;
    }
    if (this.state !== "delayed") this.pump();
  }

  /** Ends it without an answer (the proxy is stopping). */
  abort(): void {
    this.res.destroy();
    this.finish();
  }

  status(): FlowStatus {
    return {
      id: this.id,
      method: this.req.method ?? "GET",
      target: this.target ? describeTarget(this.target) : ((this.req.url ?? "/").split("?")[0] ?? "/"),
      verb: this.target?.verb ?? "read",
      state: this.state,
      startedAt: this.startedAt.toISOString(),
    };
  }

  /** The action that governs an open answer: close and drop-writes acted at arrival or when set. */
  private liveAction(): FaultAction | undefined {
    const action = decidingRule(this.context.rules(), this.target)?.rule.action;
    return action?.type === "close" || action?.type === "drop-writes" ? undefined : action;
  }

  private drop(answer: DropAnswer): void {
    this.context.counters.droppedWrites++;
    this.state = "dropped";
    this.req.resume();
    if (answer === "503") this.answerDropped();
  }

  private answerDropped(): void {
    this.res
      .writeHead(503, { "content-type": "application/json" })
      .end(
        statusBody(503, "ServiceUnavailable", "rekindle api proxy: the write was dropped (rule drop-writes)"),
      );
  }

  /** A new request under close: a watch gets an empty stream that ends; anything else a cut connection. */
  private closeAtOnce(): void {
    this.context.counters.closed++;
    this.req.resume();
    if (this.watch) this.res.writeHead(200, { "content-type": "application/json" }).end();
    else this.res.destroy();
  }

  /** An open request under close: a watch that answers ends as a stream ends, anything else is cut. */
  private closeNow(): void {
    this.context.counters.closed++;
    this.upstreamReq?.destroy();
    if (this.watch && this.res.headersSent) this.res.end();
    else this.res.destroy();
    this.finish();
  }

  private async forward(): Promise<void> {
    this.timer = undefined;
    if (this.finished) return;
    this.state = "forwarding";
    const method = this.req.method ?? "GET";
    const headers = upstreamRequestHeaders(this.req.headers, this.watch);
    try {
      this.upstreamReq = await this.context.upstream.request(method, this.req.url ?? "/", headers, (up) => {
        this.answered(up);
      });
    } catch (error) {
      this.failed(error);
      return;
    }
    this.upstreamReq.on("error", (error) => {
      this.failed(error);
    });
    // The client may have gone while the apiserver was being asked.
    if (this.isOver()) {
      this.upstreamReq.destroy();
      return;
    }
    this.req.pipe(this.upstreamReq);
  }

  private answered(up: IncomingMessage): void {
    this.upstreamRes = up;
    up.on("data", (chunk: Buffer) => {
      this.take(chunk);
    });
    up.on("end", () => {
      if (this.partial.length > 0) this.queue.push({ chunk: this.partial, due: Date.now() });
      this.partial = Buffer.alloc(0);
      this.upstreamEnded = true;
      this.pump();
    });
    up.on("error", () => {
      this.res.destroy();
      this.finish();
    });
    this.pump();
  }

  /** Queues what arrived: a watch line by line (each due `delay` after it arrived), else as it came. */
  private take(chunk: Buffer): void {
    if (!this.watch) {
      this.queue.push({ chunk, due: 0 });
    } else {
      const live = this.liveAction();
      const due = Date.now() + (live?.type === "delay" ? live.ms : 0);
      let data = this.partial.length > 0 ? Buffer.concat([this.partial, chunk]) : chunk;
      for (let at = data.indexOf(NEWLINE); at >= 0; at = data.indexOf(NEWLINE)) {
        this.queue.push({ chunk: data.subarray(0, at + 1), due });
        data = data.subarray(at + 1);
      }
      this.partial = Buffer.from(data);
    }
    this.pump();
  }

  /** Forwards what is due under the rules as they stand now. */
  private pump(): void {
    const up = this.upstreamRes;
    if (this.finished || up === undefined || this.awaitingDrain) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const live = this.liveAction();
    if (live?.type === "freeze") {
      this.state = "frozen";
      up.pause();
      return;
    }
    this.state = "forwarding";
    if (!this.res.headersSent) {
      this.res.writeHead(up.statusCode ?? 502, downstreamResponseHeaders(up.headers));
      if (this.watch) this.res.flushHeaders();
    }
    const now = Date.now();
    for (let next = this.queue[0]; next !== undefined; next = this.queue[0]) {
      if (next.due > now) {
        this.timer = setTimeout(() => {
          this.pump();
        }, next.due - now);
        break;
      }
      this.queue.shift();
      if (live?.type === "bookmarks" && !isBookmark(next.chunk)) {
        this.context.counters.filteredEvents++;
        continue;
      }
      if (!this.res.write(next.chunk)) {
        this.awaitingDrain = true;
        up.pause();
        this.res.once("drain", () => {
          this.awaitingDrain = false;
          this.pump();
        });
        return;
      }
    }
    if (this.queue.length === 0 && this.upstreamEnded) this.res.end();
    else up.resume();
  }

  private failed(error: unknown): void {
    if (this.finished) return;
    this.context.counters.upstreamErrors++;
    this.context.log(`upstream ${this.req.method ?? "GET"} ${this.req.url ?? "/"}: ${errorMessage(error)}`);
    if (!this.res.headersSent)
      this.res
        .writeHead(502, { "content-type": "application/json" })
        .end(
          statusBody(
            502,
            "BadGateway",
            `rekindle api proxy: the apiserver could not be asked: ${errorMessage(error)}`,
          ),
        );
    else this.res.destroy();
    this.finish();
  }

  private isOver(): boolean {
    return this.finished;
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    // A request whose answer ended has handed its socket back to the agent's pool: leave it be.
    if (!this.upstreamEnded) this.upstreamReq?.destroy();
    this.context.done(this);
  }
}
