// A whole-number flag or setting, refused with its name when it is not one.
import { RekindleError } from "../errors.js";

export function parseCount(flag: string, text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value)) {
    throw new RekindleError("INVALID_INPUT", `${flag} takes a whole number, not ${JSON.stringify(text)}`);
  }
  return value;
}
