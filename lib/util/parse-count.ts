// A whole-number flag or setting, refused with its name when it is not one.
import { RekindleError } from "../errors.js";

export function parseCount(flag: string, text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value)) {
    throw new RekindleError("INVALID_INPUT", `${flag} takes a whole number, not ${JSON.stringify(text)}`);
  }
  return value;
}

/**
 * A whole-number flag in [min, max], refused naming the flag and the range: `what` says what the
 * bound is when it is not a constant ("the worker count").
 */
export function parseCountIn(
  flag: string,
  text: string,
  range: { min: number; max: number; maxIs?: string },
): number {
  const value = parseCount(flag, text);
  if (value < range.min || value > range.max) {
    const bound = range.maxIs === undefined ? String(range.max) : `${range.max} (${range.maxIs})`;
    throw new RekindleError(
      "INVALID_INPUT",
      `${flag} takes a whole number from ${range.min} to ${bound}, not ${value}`,
      {
        hint: `${flag} ${range.min}..${range.max}`,
        details: { flag, got: value, min: range.min, max: range.max },
      },
    );
  }
  return value;
}
