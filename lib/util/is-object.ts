// A parsed JSON or YAML value that is an object with keys (not null, not an array).
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
