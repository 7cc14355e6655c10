// The scenarios that run on a real kind cluster in rekindle's own CI (test/integration/
// kind-suites.test.ts) and in .github/workflows/e2e-kind.yml, which must select the same ones
// (test/unit/e2e-kind-workflow.test.ts checks it).

/** In the order `rekindle run` runs them (the suites' order on the command line). */
export const KIND_CI_SCENARIOS = [
  "node-loss/baseline",
  "node-loss/manual-out-of-service",
  "node-loss/controller",
  "node-loss/controller-in-cluster",
  "partition/healed-before-detection",
  "partition/healed-after-fence",
  "zone-outage/guard-holds",
  "controller-failover/leader-killed-mid-fence",
  "graceful-shutdown/no-fence",
  "node-pressure/memory",
  "node-pressure/disk",
] as const;

/** The families of those scenarios, in run order. */
export const KIND_CI_SUITES = [
  ...new Set(KIND_CI_SCENARIOS.map((id) => id.slice(0, id.indexOf("/")))),
] as const;

/** The `--scenario` pattern that selects exactly them (mocha's grep: matched anywhere in the title). */
export const KIND_CI_SCENARIO_PATTERN = `(${KIND_CI_SCENARIOS.join("|")}) —`;

/**
 * Each family's first scenario of those, in run order: what runs first on a fresh cluster when a
 * user runs that family alone (test/full/kind-fresh-cluster.test.ts).
 */
export const KIND_CI_FAMILY_FIRSTS = KIND_CI_SUITES.map((family) => {
  const first = KIND_CI_SCENARIOS.find((id) => id.startsWith(`${family}/`));
  if (first === undefined) throw new Error(`no scenario of ${family}`);
  return first;
});
