// Graceful shutdown: pods end with reason Terminated, workloads move by themselves, no fence.
// Scenarios: lib/scenario/catalogue.ts; run with: npx rekindle run --suite graceful-shutdown
import { defineHarnessSuite } from "../lib/run/suite.js";

defineHarnessSuite("graceful-shutdown");
