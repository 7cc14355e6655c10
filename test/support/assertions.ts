// Small assertions the tests share.
import { expect } from "chai";
import { connect } from "node:net";
import { RekindleError } from "../../lib/errors.js";

/** The RekindleError `promise` rejects with (the test fails if it resolves or rejects otherwise). */
export async function rekindleRejection(promise: Promise<unknown>): Promise<RekindleError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, String(error)).to.be.instanceOf(RekindleError);
  return error as RekindleError;
}

/** The RekindleError `action` throws (the test fails if it returns or throws anything else). */
export function rekindleThrow(action: () => unknown): RekindleError {
  let error: unknown;
  try {
    action();
  } catch (e) {
    error = e;
  }
  expect(error, String(error)).to.be.instanceOf(RekindleError);
  return error as RekindleError;
}

/** Asserts `text` includes each of `parts`, in any order. */
export function expectIncludes(text: string, parts: readonly string[]): void {
  for (const part of parts) expect(text).to.include(part);
}

/** Whether anything accepts TCP connections on 127.0.0.1:`port`. */
export function listeningOn(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => {
      resolve(false);
    });
  });
}

/** Runs `run` with process.stderr captured: its value or error, and what it wrote. */
export async function captureStderr<T>(
  run: () => Promise<T>,
): Promise<{ value: T | undefined; error: unknown; stderr: string }> {
  const original = process.stderr.write.bind(process.stderr);
  let stderr = "";
  process.stderr.write = (chunk: string | Uint8Array) => {
    stderr += chunk.toString();
    return true;
  };
  try {
    return { value: await run(), error: undefined, stderr };
  } catch (error) {
    return { value: undefined, error, stderr };
  } finally {
    process.stderr.write = original;
  }
}

/**
 * Fails when `actual` holds any of `forbidden`, naming the one it holds. (chai's
 * `not.include.members([a, b])` fails only when it holds all of them; lint refuses that form.)
 */
export function expectNoneOf(
  actual: readonly string[],
  forbidden: readonly string[],
  what = "the list",
): void {
  for (const name of forbidden) expect(actual, `${what} holds ${name}`).to.not.include(name);
}
