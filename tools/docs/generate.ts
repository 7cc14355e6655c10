// `npm run docs`: regenerates docs/scenarios.md, docs/measurements.md and docs/scenario.schema.json.
import { writeFileSync } from "node:fs";
import {
  MEASUREMENTS_PAGE,
  measurementsPageText,
  SCENARIO_SCHEMA_PAGE,
  scenarioSchemaPageText,
  SCENARIOS_PAGE,
  scenariosPageText,
} from "./pages.js";

writeFileSync(SCENARIOS_PAGE, scenariosPageText());
writeFileSync(MEASUREMENTS_PAGE, measurementsPageText());
writeFileSync(SCENARIO_SCHEMA_PAGE, scenarioSchemaPageText());
console.log(`written: ${SCENARIOS_PAGE}, ${MEASUREMENTS_PAGE}, ${SCENARIO_SCHEMA_PAGE}`);
