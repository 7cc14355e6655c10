// A real kind binary for tests: rekindle's own build of the pinned release (lib/build/kind-binary.ts).
export { ensureKindBinary, kindBinaryPath } from "../../lib/build/kind-binary.js";
export { PINNED_KIND_VERSION } from "../../lib/cluster/kind/cli.js";
