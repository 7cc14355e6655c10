// Keeps a describe's runs from writing their sign-off into a CI job's own step summary.
/** Unsets GITHUB_STEP_SUMMARY before the describe's tests and restores it after them. */
export function withoutStepSummary(): void {
  const saved = process.env["GITHUB_STEP_SUMMARY"];
  before(function () {
    delete process.env["GITHUB_STEP_SUMMARY"];
  });
  after(function () {
    if (saved !== undefined) process.env["GITHUB_STEP_SUMMARY"] = saved;
  });
}
