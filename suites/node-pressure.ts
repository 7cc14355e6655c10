// Node pressure: memory and disk; condition, NoSchedule taint, evictions in kubelet order, replacements elsewhere, no fence.
// Scenarios: lib/scenario/catalogue.ts; run with: npx rekindle run --suite node-pressure
import { defineHarnessSuite } from "../lib/run/suite.js";

defineHarnessSuite("node-pressure");
