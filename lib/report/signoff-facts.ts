// The facts a sign-off page shows, computed once by signoff.ts and printed by both renderers
// (signoff-html.ts, signoff-md.ts): a leaf, so the renderers import it rather than signoff.ts.

/** A label and its value, as both renderers print them. */
export type Fact = readonly [label: string, value: string];

/** How a measured time stands against its expected window. */
export type WindowStatus = "within" | "early" | "late" | "missing" | "absent as required" | "HAPPENED";

export interface WindowRow {
  milestone: string;
  /** "2.0s–20.0s" or "must not happen". */
  window: string;
  /** "12.3s" (p50 over repeats), or "—" when it did not happen. */
  measured: string;
  status: WindowStatus;
}

/** One budget of a scenario file, over the run's repeats. */
export interface BudgetRow {
  workload: string;
  /** "recovered within", "never evicted"… */
  budget: string;
  /** "45 s", "1", "never". */
  limit: string;
  /** What the worst run measured: "52.3 s", "2 at 12.3 s", "never". */
  measured: string;
  /** "met", "MISSED", or "MISSED in 2 of 3 runs". */
  verdict: string;
}

export interface ScenarioSignoff {
  id: string;
  verdict: "PASS" | "FAIL";
  figure: string;
  windows: WindowRow[];
  /** Empty when the scenario has no budgets. */
  budgets: BudgetRow[];
  error?: string;
}

/** Everything both renderers show, computed once. */
export interface SignoffFacts {
  runId: string;
  /** "PASSED", "FAILED", "HARNESS FAILED" or "INTERRUPTED". */
  verdict: string;
  /** One line under the verdict: counts, or what broke. */
  verdictLine: string;
  summarySha256: string;
  versions: Fact[];
  knobs: Fact[];
  host: Fact[];
  scenarios: ScenarioSignoff[];
  skipped: { id: string; reason: string }[];
}
