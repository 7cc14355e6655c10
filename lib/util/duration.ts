// The one duration parser: Go-style durations ("500ms", "10s", "1m30s", "2h") as every Kubernetes
// component config and our own CLI flags write them, in milliseconds.
import { RekindleError } from "../errors.js";

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** What the error message offers as valid input. */
export const DURATION_FORMS = "a Go duration such as 500ms, 10s, 1m30s or 2h (units ns, us, ms, s, m, h)";

/**
 * Parses a Go duration into milliseconds. A sequence of number+unit parts ("1h2m3.5s"), or a bare
 * "0" as Go allows. Negative values, bare numbers and unknown units are rejected with an
 * INVALID_INPUT error naming `what` (a flag or a config field) and the input.
 */
export function parseDurationMs(text: string, what = "duration"): number {
  const trimmed = text.trim();
  if (trimmed === "0") return 0;
  // Sticky: each part must start exactly where the previous one ended.
  const part = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let index = 0;
  while (index < trimmed.length) {
    part.lastIndex = index;
    const match = part.exec(trimmed);
    const unit = match?.[2] === undefined ? undefined : UNIT_MS[match[2]];
    if (match?.[1] === undefined || unit === undefined) {
      throw RekindleError.invalidInput(what, text, DURATION_FORMS);
    }
    total += Number(match[1]) * unit;
    index = part.lastIndex;
  }
  if (index === 0) throw RekindleError.invalidInput(what, text, DURATION_FORMS);
  return total;
}

/** What the error message offers as valid input for an offset. */
export const SIGNED_DURATION_FORMS =
  "a Go duration with an optional sign, such as -30s (behind), +1m30s or 45s (ahead), or 0";

/**
 * Parses a signed Go duration ("-30s", "+1m", "45s", "0") into milliseconds, for offsets. Errors
 * name `what` and the input, as parseDurationMs does.
 */
export function parseSignedDurationMs(text: string, what = "offset"): number {
  const trimmed = text.trim();
  const sign = trimmed.startsWith("-") ? -1 : 1;
  const magnitude = /^[-+]/.test(trimmed) ? trimmed.slice(1) : trimmed;
  if (magnitude === "" || /^[-+]/.test(magnitude)) {
    throw RekindleError.invalidInput(what, text, SIGNED_DURATION_FORMS);
  }
  try {
    const ms = parseDurationMs(magnitude, what);
    return ms === 0 ? 0 : sign * ms;
  } catch {
    throw RekindleError.invalidInput(what, text, SIGNED_DURATION_FORMS);
  }
}
