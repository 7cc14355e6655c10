// Zone outage: every worker of a zone lost at once; the controller's guard holds and says why.
// Scenarios: lib/scenario/catalogue.ts; run with: npx rekindle run --suite zone-outage
import { defineHarnessSuite } from "../lib/run/suite.js";

defineHarnessSuite("zone-outage");
