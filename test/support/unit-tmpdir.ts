// The unit layer's temporary files go under one directory of their own, removed when the run
// ends: many tests make a directory with mkdtemp(tmpdir()) and leave it (about 120 a run). Set at
// load, before any test asks os.tmpdir(), which reads TMPDIR on every call. Unit tests start no
// cluster, so no other process needs to share this directory (the integration layer keeps the
// shared one: loopback port reservations of concurrent runs live there).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = mkdtempSync(join(tmpdir(), "rekindle-unit-"));
process.env.TMPDIR = root;

export const mochaHooks = {
  afterAll(): void {
    rmSync(root, { recursive: true, force: true });
  },
};
