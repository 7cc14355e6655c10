// `npm run docs`: regenerates docs/scenarios.md and docs/measurements.md.
import { writeFileSync } from "node:fs";
import { MEASUREMENTS_PAGE, measurementsPageText, SCENARIOS_PAGE, scenariosPageText } from "./docs-pages.js";

writeFileSync(SCENARIOS_PAGE, scenariosPageText());
writeFileSync(MEASUREMENTS_PAGE, measurementsPageText());
console.log(`written: ${SCENARIOS_PAGE}, ${MEASUREMENTS_PAGE}`);
