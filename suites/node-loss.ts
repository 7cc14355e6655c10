// Node loss: a worker stops abruptly under a Deployment, a StatefulSet and one with an RWO volume;
// baseline, out-of-service by hand, and with the recovery controller.
// Scenarios: lib/scenario/families/node-loss.ts; run with: npx rekindle run --suite node-loss
import { defineHarnessSuite } from "../lib/run/suite.js";

defineHarnessSuite("node-loss");
