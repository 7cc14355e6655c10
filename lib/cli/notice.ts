// A line for the person at the terminal (stderr) that is neither the result nor an error: what a
// command did and how to go on. -q drops it with the rest of the progress (lib/util/progress.ts).
import { progressLevel } from "../util/progress.js";

/** Writes `text` and a newline to stderr unless the progress level is quiet. */
export function notice(text: string): void {
  if (progressLevel() === "quiet") return;
  process.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
}
