// Checks a node's fence target (options after `{{node}}`, credentials) against its driver's spec:
// at start-up for every node, and again by the driver before each call (a Secret may change).
import { readFileSync } from "node:fs";
import { RekindleError } from "../../errors.js";
import { parseDurationMs } from "../../util/duration.js";
import type { FenceDriver, FenceDriverSpec, FenceTarget } from "./types.js";

/** C0 controls (newline, carriage return, tab…), DEL and C1 controls. */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

export function hasControlCharacter(value: string): boolean {
  return CONTROL_CHARACTER.test(value);
}

/** The problems of `target` under `spec`: unknown or missing options, invalid values, missing credentials. */
export function specProblems(spec: FenceDriverSpec, target: FenceTarget): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(target.options)) {
    const option = spec.options[name];
    if (!option) {
      if (!spec.passThroughOptions) {
        const known = Object.keys(spec.options);
        problems.push(
          `unknown option "${name}"; valid: ${known.length > 0 ? known.join(", ") : "none (this driver takes no options)"}`,
        );
      }
      continue;
    }
    if (option.test && !option.test(value)) {
      problems.push(`option ${name} is ${JSON.stringify(value)}; valid: ${option.valid}`);
    }
  }
  for (const [name, option] of Object.entries(spec.options)) {
    if (option.required && target.options[name] === undefined) {
      problems.push(`option ${name} is required (${option.valid})`);
    }
  }
  const missing = (spec.requiredCredentials ?? []).filter((key) => target.credentials[key] === undefined);
  if (missing.length > 0) {
    problems.push(`credentials lack ${missing.join(", ")} (keys of the template's Secret)`);
  }
  if (problems.length === 0 && spec.checkTarget) problems.push(...spec.checkTarget(target));
  return problems;
}

/** Throws INVALID_INPUT naming the node, the driver and every problem, unless `target` suits `driver`. */
export function assertValidTarget(driver: Pick<FenceDriver, "name" | "spec">, target: FenceTarget): void {
  if (!driver.spec) return;
  const problems = specProblems(driver.spec, target);
  if (problems.length > 0) {
    throw new RekindleError(
      "INVALID_INPUT",
      `fence driver ${driver.name} for node ${target.node}: ${problems.join("; ")}`,
      { details: { node: target.node, driver: driver.name, problems } },
    );
  }
}

// Value tests the drivers share.

export const BOOLEAN_OPTION = {
  valid: '"true" or "false"',
  test: (v: string) => v === "true" || v === "false",
};

/** A driver's request timeout option: a Go duration from 1 s to 5 min. */
export const TIMEOUT_BOUNDS_MS = { min: 1_000, max: 300_000 } as const;

export const TIMEOUT_OPTION = {
  valid: "a duration from 1s to 5m, such as 10s",
  test: (v: string) => {
    try {
      const ms = parseDurationMs(v);
      return ms >= TIMEOUT_BOUNDS_MS.min && ms <= TIMEOUT_BOUNDS_MS.max;
    } catch {
      return false;
    }
  },
};

/** The timeout option in ms, or `fallbackMs` when unset. */
export function timeoutOption(target: FenceTarget, fallbackMs: number): number {
  const text = target.options["timeout"];
  return text === undefined ? fallbackMs : parseDurationMs(text, "timeout");
}

/** An http(s) URL without user info: credentials travel only from the template's Secret. */
export const URL_OPTION = {
  required: true,
  valid: 'an https:// URL without user:password@ (http:// only with allowHttp: "true")',
  test: (v: string) => {
    try {
      const url = new URL(v);
      return (url.protocol === "https:" || url.protocol === "http:") && !url.username && !url.password;
    } catch {
      return false;
    }
  },
};

export const CA_FILE_OPTION = { valid: "the path of a readable PEM CA bundle" };

/** The url must be https unless allowHttp is "true"; a caFile must be readable. */
export function transportProblems(target: FenceTarget): string[] {
  const problems: string[] = [];
  const url = target.options["url"] ?? "";
  if (!url.startsWith("https://") && target.options["allowHttp"] !== "true") {
    problems.push(
      `needs an https:// url, not ${JSON.stringify(url)}: credentials travel with every request (allowHttp: "true" for a lab only)`,
    );
  }
  const caFile = target.options["caFile"];
  if (caFile !== undefined) {
    try {
      readFileSync(caFile);
    } catch (error) {
      problems.push(`caFile ${caFile} cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`);
    }
  }
  return problems;
}
