// Reads Kubernetes component logs (klog's text format) where the API keeps no trace of a decision,
// such as the attach-detach controller's forced detach.
import { closeSync, openSync, readSync, statSync } from "node:fs";

export interface KlogEntry {
  /** Epoch ms of the line's header time (klog writes local time, with no year). */
  atMs: number;
  severity: "I" | "W" | "E" | "F";
  message: string;
  /** The structured key="value" pairs after the message. */
  fields: Record<string, string>;
}

// I1122 19:40:01.123456   12345 reconciler.go:123] "message" key="value" key2=value2
const HEADER = /^([IWEF])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})\s+\d+\s+[^\]]*\]\s(.*)$/;
const FIELD = /([A-Za-z][\w.-]*)=("(?:[^"\\]|\\.)*"|\S+)/g;

/** Parses one klog line; undefined for anything else (continuation lines, other formats). */
export function parseKlogLine(line: string, now: Date = new Date()): KlogEntry | undefined {
  const m = HEADER.exec(line);
  if (!m) return undefined;
  const [, severity, month, day, hours, minutes, seconds, micros, rest = ""] = m;
  const at = (year: number) =>
    new Date(
      year,
      Number(month) - 1,
      Number(day),
      Number(hours),
      Number(minutes),
      Number(seconds),
      Math.floor(Number(micros) / 1000),
    ).getTime();
  // No year in the header: the line is from this year unless that puts it in the future (new year's eve).
  let atMs = at(now.getFullYear());
  if (atMs > now.getTime() + 86_400_000) atMs = at(now.getFullYear() - 1);
  let message = rest;
  let tail = "";
  if (rest.startsWith('"')) {
    const end = closingQuote(rest);
    message = unquote(rest.slice(0, end + 1));
    tail = rest.slice(end + 1);
  }
  const fields: Record<string, string> = {};
  for (const f of tail.matchAll(FIELD)) {
    const value = f[2] ?? "";
    fields[f[1] ?? ""] = value.startsWith('"') ? unquote(value) : value;
  }
  return { atMs, severity: severity as KlogEntry["severity"], message, fields };
}

function closingQuote(text: string): number {
  for (let i = 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i;
  }
  return text.length - 1;
}

function unquote(text: string): string {
  try {
    return JSON.parse(text) as string;
  } catch {
    return text.replace(/^"|"$/g, "");
  }
}

/** Follows a growing log file: each read returns the complete lines written since the last one. */
export class LogFollower {
  readonly path: string;
  #offset: number;
  #partial = "";

  /** Starts at the file's current end: only what is written from now on is read. */
  constructor(path: string) {
    this.path = path;
    this.#offset = fileSize(path);
  }

  readLines(): string[] {
    const size = fileSize(this.path);
    if (size < this.#offset) {
      this.#offset = 0; // Truncated or replaced: start over.
      this.#partial = "";
    }
    if (size === this.#offset) return [];
    const buffer = Buffer.alloc(size - this.#offset);
    const fd = openSync(this.path, "r");
    try {
      readSync(fd, buffer, 0, buffer.length, this.#offset);
    } finally {
      closeSync(fd);
    }
    this.#offset = size;
    const text = this.#partial + buffer.toString("utf8");
    const lines = text.split("\n");
    this.#partial = lines.pop() ?? "";
    return lines;
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
