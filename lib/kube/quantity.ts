// Kubernetes resource quantities ("64Mi", "1G", "500m", "1e3") as numbers of base units
// (bytes for memory and storage).
import { RekindleError } from "../errors.js";

const BINARY_SUFFIXES: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = {
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

const QUANTITY_PATTERN = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E))?$/;

/** A Kubernetes resource quantity as a number of units (bytes for memory and storage). */
export function parseQuantity(text: string): number {
  const match = QUANTITY_PATTERN.exec(text.trim());
  if (!match?.[1]) {
    throw RekindleError.invalidInput(
      "resource quantity",
      text,
      "a number with an optional suffix: Ki, Mi, Gi, Ti, Pi, Ei, k, M, G, T, P, E, m or an exponent (1e6)",
    );
  }
  const value = Number(match[1]);
  if (match[2] !== undefined) return value * 10 ** Number(match[2].slice(1));
  const suffix = match[3] ?? "";
  return value * (BINARY_SUFFIXES[suffix] ?? DECIMAL_SUFFIXES[suffix] ?? 1);
}
