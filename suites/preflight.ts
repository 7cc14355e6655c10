// Preflight: read-only checks that the cluster can be timed (every provider, even an existing cluster).
// Scenarios: lib/scenario/catalogue.ts; run with: npx rekindle run --suite preflight
import { defineHarnessSuite } from "../lib/run/suite.js";

defineHarnessSuite("preflight");
