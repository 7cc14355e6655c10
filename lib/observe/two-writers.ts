// The two-writer check at the data level: from the writer workload's log (writer-log.ts), every
// interval in which two writers (a pod UID on a node) both wrote to the one volume. A missed fence
// shows here as data, whatever the API said about the pods.
import type { Milestone } from "./milestone.js";
import type { WriterLog, WriterRecord } from "./writer-log.js";

/** Default tolerance for the clock skew between two writers' nodes (on kind all share the host's). */
export const DEFAULT_SKEW_TOLERANCE_MS = 100;

export interface TwoWritersOptions {
  /**
   * Wall-clock spans of two writers on different nodes may intersect by this much without an
   * overlap being reported (a hand-over between nodes whose clocks disagree). Default
   * DEFAULT_SKEW_TOLERANCE_MS. Records interleaved in the log are an overlap whatever the clocks say.
   */
  skewToleranceMs?: number;
}

/** One copy of the workload: a pod (its UID) on a node. A restarted container is the same writer. */
export interface Writer {
  podUid: string;
  node: string;
}

/** One writer's part of an overlap. */
export interface OverlapSide extends Writer {
  /** Its records inside the interval. */
  records: number;
}

/** An interval in which two writers both wrote. Times are the writers' wall clocks, ms since the epoch. */
export interface WriterOverlap {
  writers: [OverlapSide, OverlapSide];
  startMs: number;
  endMs: number;
  /** "interleaved": their records alternate in the log; "wall-clock": only their times intersect. */
  evidence: "interleaved" | "wall-clock";
}

interface Span extends Writer {
  records: WriterRecord[];
  first: WriterRecord;
  last: WriterRecord;
}

const keyOf = (w: Writer) => `${w.podUid}\u0000${w.node}`;

/** The log's writers in the order they first wrote, each with its records in log order. */
export function writersOf(log: WriterLog): Span[] {
  const spans = new Map<string, Span>();
  for (const r of log.records) {
    const span = spans.get(keyOf(r));
    if (span === undefined)
      spans.set(keyOf(r), { podUid: r.podUid, node: r.node, records: [r], first: r, last: r });
    else {
      span.records.push(r);
      if (r.wallUs < span.first.wallUs) span.first = r;
      if (r.wallUs > span.last.wallUs) span.last = r;
    }
  }
  return [...spans.values()];
}

const firstIndex = (s: Span) => s.records[0]?.index ?? 0;
const lastIndex = (s: Span) => s.records[s.records.length - 1]?.index ?? 0;

function overlapOf(a: Span, b: Span, toleranceUs: number): WriterOverlap | undefined {
  // The log is the order the appends reached the volume: no clock decides whether they interleave.
  const fromIndex = Math.max(firstIndex(a), firstIndex(b));
  const toIndex = Math.min(lastIndex(a), lastIndex(b));
  const startUs = Math.max(a.first.wallUs, b.first.wallUs);
  const endUs = Math.min(a.last.wallUs, b.last.wallUs);
  const interleaved = fromIndex <= toIndex;
  const sameNode = a.node === b.node;
  if (!interleaved && endUs - startUs <= (sameNode ? 0 : toleranceUs)) return undefined;
  const inside = (r: WriterRecord) =>
    interleaved ? r.index >= fromIndex && r.index <= toIndex : r.wallUs >= startUs && r.wallUs <= endUs;
  const side = (s: Span): OverlapSide => ({
    podUid: s.podUid,
    node: s.node,
    records: s.records.filter(inside).length,
  });
  // Skewed clocks can put the interleaved stretch's ends in the other order: report it as a stretch.
  const [lo, hi] = startUs <= endUs ? [startUs, endUs] : [endUs, startUs];
  return {
    writers: [side(a), side(b)],
    startMs: lo / 1000,
    endMs: hi / 1000,
    evidence: interleaved ? "interleaved" : "wall-clock",
  };
}

/** Every pair of writers that overlapped, in the order the later of the two began. */
export function twoWriterOverlaps(log: WriterLog, options: TwoWritersOptions = {}): WriterOverlap[] {
  const toleranceUs = (options.skewToleranceMs ?? DEFAULT_SKEW_TOLERANCE_MS) * 1000;
  const spans = writersOf(log);
  const out: WriterOverlap[] = [];
  for (let j = 1; j < spans.length; j++) {
    for (let i = 0; i < j; i++) {
      const overlap = overlapOf(spans[i] as Span, spans[j] as Span, toleranceUs);
      if (overlap !== undefined) out.push(overlap);
    }
  }
  return out;
}

/** One line per overlap, for a verdict or a report. */
export function describeOverlap(o: WriterOverlap): string {
  const [a, b] = o.writers;
  const ms = Math.round(o.endMs - o.startMs);
  return (
    `pod ${a.podUid} on ${a.node} (${a.records} records) and pod ${b.podUid} on ${b.node} ` +
    `(${b.records} records) both wrote for ${ms} ms from ${new Date(o.startMs).toISOString()} (${o.evidence})`
  );
}

/**
 * `<id>:two-writers` at the start of the first overlap, ms since the fault (the writers' wall clock
 * against the harness's: on kind one host clock), on the node of the writer that made it two.
 * Undefined when no two writers overlapped.
 */
export function twoWritersMilestone(
  id: string,
  overlaps: readonly WriterOverlap[],
  faultAtMs: number,
): Milestone | undefined {
  const first = [...overlaps].sort((a, b) => a.startMs - b.startMs)[0];
  if (first === undefined) return undefined;
  return { name: `${id}:two-writers`, atMs: first.startMs - faultAtMs, node: first.writers[1].node };
}
