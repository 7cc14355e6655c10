// Generated text between two HTML-comment markers of a Markdown page, formatted as the repository's
// lint expects (prettier), so a freshly written page passes `npm run lint`.
import { readFileSync, writeFileSync } from "node:fs";
import { format, resolveConfig } from "prettier";
import { RekindleError } from "../lib/errors.js";

export async function writeBetweenMarkers(
  file: string,
  begin: string,
  end: string,
  text: string,
): Promise<void> {
  const doc = readFileSync(file, "utf8");
  const start = doc.indexOf(begin);
  const stop = doc.indexOf(end);
  if (start < 0 || stop < start) {
    throw new RekindleError("PRECONDITION", `${file}: the markers ${begin} … ${end} are missing`);
  }
  const next = `${doc.slice(0, start + begin.length)}\n\n${text}\n\n${doc.slice(stop)}`;
  writeFileSync(file, await format(next, { ...(await resolveConfig(file)), parser: "markdown" }));
}
