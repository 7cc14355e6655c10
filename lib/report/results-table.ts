// Markdown tables of results files' JSON, shared by the measurements page's renderers.
export type Json = Record<string, unknown>;

export function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** One cell: text as is, anything else as JSON; pipes escaped, line breaks folded. */
export function cell(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ");
}

export function table(header: string[], rows: string[][]): string[] {
  return [
    `| ${header.join(" | ")} |`,
    `| ${header.map(() => "---").join(" | ")} |`,
    ...rows.map((r) => `| ${r.map(cell).join(" | ")} |`),
  ];
}

/** The records of the array `content[key]` (none when it is not an array). */
export function rowsOf(content: Json, key: string): Json[] {
  const value = content[key];
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** "36 min 40 s", "18 s"; "—" for anything not a number. */
export function minutes(ms: unknown): string {
  if (typeof ms !== "number") return "—";
  const total = Math.round(ms / 1000);
  const m = Math.floor(total / 60);
  return m === 0 ? `${total % 60} s` : `${m} min ${total % 60} s`;
}
