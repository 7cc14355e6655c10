// How long each scenario really took on this machine, setup and cleanup included, the last time a
// `--parallel` run ran it: the work queue's order (parallel-queue.ts). The catalogue's windows do
// not know setup, cleanup or a scenario that asserts only what must never happen (a safety
// scenario with no window is expected to take 0 s and takes 10–60), so a queue ordered by them
// alone leaves 30–60 s scenarios for the end of the run. Kept in the build cache, per provider
// and profile; a file that cannot be read or written only costs the better order.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { cacheRoot } from "../util/paths.js";

/** Where the spans live: <cache>/scenario-spans.json. */
export function scenarioSpansPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), "scenario-spans.json");
}

/** A scenario never measured here is taken as its windows' end plus this much setup and cleanup. */
export const UNMEASURED_SETUP_MS = 20_000;

type SpanFile = Record<string, Record<string, number>>;

export interface ScenarioSpansOptions {
  /** Provider and profile the spans are of: a fast-profile span says nothing of the default one. */
  provider: string;
  profile: string;
  /** Default scenarioSpansPath(). */
  path?: string;
}

export class ScenarioSpans {
  readonly #path: string;
  readonly #key: string;
  readonly #file: SpanFile;
  readonly #recorded = new Map<string, number>();

  constructor(options: ScenarioSpansOptions) {
    this.#path = options.path ?? scenarioSpansPath();
    this.#key = `${options.provider}/${options.profile}`;
    this.#file = readSpanFile(this.#path);
  }

  /** The span measured here last time, ms; undefined if never. */
  get(id: string): number | undefined {
    return this.#file[this.#key]?.[id];
  }

  /** Notes this run's span of `id` (written by save()). */
  record(id: string, ms: number): void {
    if (Number.isFinite(ms) && ms >= 0) this.#recorded.set(id, Math.round(ms));
  }

  /**
   * Writes the recorded spans, each the mean of the last one and this run's (one slow cluster does
   * not reorder the next run). Returns the error's message when the file cannot be written.
   */
  save(): string | undefined {
    if (this.#recorded.size === 0) return undefined;
    const current = readSpanFile(this.#path);
    const own = { ...current[this.#key] };
    for (const [id, ms] of this.#recorded) {
      const before = own[id];
      own[id] = before === undefined ? ms : Math.round((before + ms) / 2);
    }
    try {
      mkdirSync(dirname(this.#path), { recursive: true });
      const temporary = `${this.#path}.${process.pid}.tmp`;
      writeFileSync(temporary, `${JSON.stringify({ ...current, [this.#key]: own }, null, 2)}\n`);
      renameSync(temporary, this.#path);
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }
}

function readSpanFile(path: string): SpanFile {
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as unknown;
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return {};
    const out: SpanFile = {};
    for (const [key, spans] of Object.entries(parsed as Record<string, unknown>)) {
      if (typeof spans !== "object" || spans === null) continue;
      out[key] = Object.fromEntries(
        Object.entries(spans as Record<string, unknown>).filter(
          (e): e is [string, number] => typeof e[1] === "number",
        ),
      );
    }
    return out;
  } catch {
    return {};
  }
}

/** Each cluster's current scenario and when it took it: a scenario ends when its cluster asks again. */
export class SpanClock {
  readonly #current = new Map<number, { id: string; at: number }>();

  constructor(
    private readonly spans: ScenarioSpans,
    private readonly now: () => number = Date.now,
  ) {}

  /** Cluster `slot` asked for its next scenario and got `id` (undefined: none left). */
  took(slot: number, id: string | undefined): void {
    const at = this.now();
    const previous = this.#current.get(slot);
    if (previous !== undefined) this.spans.record(previous.id, at - previous.at);
    if (id === undefined) this.#current.delete(slot);
    else this.#current.set(slot, { id, at });
  }
}
