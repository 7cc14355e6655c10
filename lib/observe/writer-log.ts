// The writer workload's log (deploy/workloads/writer): one JSON line per record, appended with
// O_APPEND and fsync'd by each copy of the workload that has the volume. Parsed here; the overlap
// check is two-writers.ts.

/** One record as a writer appended it (the Go program's Record). */
export interface WriterRecord {
  podUid: string;
  node: string;
  pid: number;
  /** The process's own count of its records, from 0. */
  seq: number;
  /** The writer node's wall clock, µs since the Unix epoch. */
  wallUs: number;
  /** The process's monotonic clock, µs since it started. */
  monoUs: number;
  /** The record's place in the log (0-based line number): the order the appends reached the volume. */
  index: number;
}

/** A line that is not a record. */
export interface BadLine {
  /** 1-based line number. */
  line: number;
  text: string;
}

export interface WriterLog {
  records: WriterRecord[];
  /**
   * The final line, when it is cut short (no newline, or not a whole record): a writer stopped
   * mid-append. It is ignored; only a torn *last* line is expected.
   */
  tornLastLine?: BadLine;
  /** Lines before the last that are not records: the log was damaged, which a writer never does. */
  corrupt: BadLine[];
}

const NUMBER_FIELDS = ["pid", "seq", "wallUs", "monoUs"] as const;

function recordOf(text: string, index: number): WriterRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const fields = value as Record<string, unknown>;
  const { podUid, node } = fields;
  if (typeof podUid !== "string" || podUid === "" || typeof node !== "string" || node === "")
    return undefined;
  const numbers: number[] = [];
  for (const name of NUMBER_FIELDS) {
    const n = fields[name];
    if (typeof n !== "number" || !Number.isInteger(n)) return undefined;
    numbers.push(n);
  }
  const [pid, seq, wallUs, monoUs] = numbers as [number, number, number, number];
  return { podUid, node, pid, seq, wallUs, monoUs, index };
}

/** Parses a whole log. An empty text is an empty log. */
export function parseWriterLog(text: string): WriterLog {
  const lines = text.split("\n");
  // A complete log ends with a newline: the split's last element is then "".
  const last = lines.pop() ?? "";
  const records: WriterRecord[] = [];
  const corrupt: BadLine[] = [];
  let tornLastLine: BadLine | undefined = last === "" ? undefined : { line: lines.length + 1, text: last };
  lines.forEach((text, i) => {
    const record = recordOf(text, records.length);
    if (record !== undefined) {
      records.push(record);
      return;
    }
    const bad = { line: i + 1, text };
    // Nothing after it: a torn final record whose writer's newline never came is still the last.
    if (i === lines.length - 1 && tornLastLine === undefined) tornLastLine = bad;
    else corrupt.push(bad);
  });
  return { records, corrupt, ...(tornLastLine ? { tornLastLine } : {}) };
}
