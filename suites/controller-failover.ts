// Controller failover: the leader dies mid-fence; the standby finishes without a second fence.
// Scenarios: lib/scenario/catalogue.ts; run with: npx rekindle run --suite controller-failover
import { defineHarnessSuite } from "../lib/run/suite.js";

defineHarnessSuite("controller-failover");
