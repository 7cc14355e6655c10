// Per-run output folder for tests: reports/test-<timestamp>/, where cluster logs are kept.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";

export function testRunDir(label: string): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const dir = join(PROJECT_ROOT, "reports", `test-${stamp}-${label}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}
