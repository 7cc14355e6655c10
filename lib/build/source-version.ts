// The version of a Go module of ours (deploy/csi, deploy/workloads/writer): a hash of its build
// inputs, so a changed source is a new cache entry and an unchanged one is never rebuilt.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The module's build inputs: its Go sources and module files, tests left out, sorted. */
export function moduleSourceFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => (f.endsWith(".go") && !f.endsWith("_test.go")) || f === "go.mod" || f === "go.sum")
    .sort();
}

/** "src-" + 10 hex digits over the module's build inputs (names and contents). */
export function moduleSourceVersion(dir: string): string {
  const hash = createHash("sha256");
  for (const file of moduleSourceFiles(dir)) {
    hash.update(file);
    hash.update(readFileSync(join(dir, file)));
  }
  return `src-${hash.digest("hex").slice(0, 10)}`;
}
