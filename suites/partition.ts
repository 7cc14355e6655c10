// Partition: healed before the controller's detection (nothing happens) and after a fence (the node returns clean).
// Scenarios: lib/scenario/catalogue.ts; run with: npx rekindle run --suite partition
import { defineHarnessSuite } from "../lib/run/suite.js";

defineHarnessSuite("partition");
