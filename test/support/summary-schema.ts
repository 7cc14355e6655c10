// The published schema's validator (lib/report/summary-schema.ts), for the tests that check real
// summaries against what docs/ promises.
export { SUMMARY_SCHEMA_PATH, summarySchemaErrors } from "../../lib/report/summary-schema.js";
