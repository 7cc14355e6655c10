// Kubernetes resource quantities ("64Mi", "1G", "500m", "1e3") as numbers of base units.
import { RekindleError } from "../errors.js";

const SUFFIXES: Readonly<Record<string, number>> = {
  "": 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

export function parseQuantity(text: string): number {
  const match = /^([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)([a-zA-Z]*)$/.exec(text.trim());
  const factor = match ? SUFFIXES[match[2] ?? ""] : undefined;
  if (!match || factor === undefined) {
    throw RekindleError.invalidInput(
      "resource quantity",
      text,
      'a number with an optional suffix: m, k, M, G, T, Ki, Mi, Gi, Ti (e.g. "64Mi", "500m")',
    );
  }
  return Number(match[1]) * factor;
}
