// A scenario file's text → its plain data and where each key was written, or the YAML syntax
// problems with their positions. One YAML document per file.
import { LineCounter, parseAllDocuments } from "yaml";
import { errorMessage } from "../errors.js";
import { documentPositions, type DocumentPositions } from "./positions.js";
import type { Problem } from "./problems.js";
import { SCENARIO_API_VERSION, SCENARIO_KIND } from "./types.js";

export type Parsed =
  { ok: true; data: unknown; positions: DocumentPositions } | { ok: false; problems: Problem[] };

/** Parses `text`; `file` is the name positions and problems carry. */
export function parseScenarioText(text: string, file: string): Parsed {
  const lineCounter = new LineCounter();
  const documents = parseAllDocuments(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number): Problem["position"] => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, column: col };
  };
  const problems: Problem[] = [];
  for (const document of documents) {
    for (const error of document.errors) {
      const [start] = error.pos;
      const key = error.code === "DUPLICATE_KEY" ? keyAt(text, start) : undefined;
      const message =
        key === undefined ? `YAML: ${error.message}` : `YAML: duplicate key ${JSON.stringify(key)}`;
      problems.push({ position: at(start), message });
    }
  }
  const [first, second] = documents;
  if (second !== undefined) {
    problems.push({
      position: at(second.range[0]),
      message: "a second YAML document; a scenario file holds one (put each scenario in its own file)",
    });
  }
  if (problems.length > 0) return { ok: false, problems };
  // A file of comments only parses to no document at all.
  if (first?.contents == null) {
    const expected = `apiVersion: ${SCENARIO_API_VERSION}, kind: ${SCENARIO_KIND}`;
    return {
      ok: false,
      problems: [
        {
          position: { file, line: 1, column: 1 },
          message: `the file is empty; expected a scenario (${expected})`,
        },
      ],
    };
  }
  let data: unknown;
  try {
    data = first.toJS();
  } catch (error) {
    // Aliases past the expansion limit (a "billion laughs" file) end here.
    return { ok: false, problems: [{ position: at(0), message: `YAML: ${errorMessage(error)}` }] };
  }
  return { ok: true, data, positions: documentPositions(first.contents, lineCounter, file) };
}

/** The plain or quoted mapping key written at `offset` ("name" in `  name: x`), if one is. */
function keyAt(text: string, offset: number): string | undefined {
  const match = /("[^"\n]*"|'[^'\n]*'|[^\s:#,{}[\]]+)\s*:/y;
  match.lastIndex = offset;
  const key = match.exec(text)?.[1];
  return key?.replace(/^["']|["']$/g, "");
}
