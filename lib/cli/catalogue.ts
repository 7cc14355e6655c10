// The scenario catalogue as a markdown page (`rekindle list --markdown`, committed as
// docs/scenarios.md): every scenario's expected windows and the reason for each, computed by the
// same model `rekindle list` prints, so the page cannot drift from the code.
import { SIM_DEFAULT_LATENCIES } from "../cluster/sim/cluster.js";
import type { TimingProfile } from "../cluster/profiles.js";
import { nominalWindows, type ExpectedMilestone } from "../expect/model.js";
import { expectationInputs, type ExpectationInputs } from "../scenario/harness.js";
import { SCENARIOS, type SuiteFamily } from "../../suites/index.js";

/** The inputs `rekindle list` resolves windows with: the sim provider's (kind differs only in pod start and attach latency). */
export function listExpectationInputs(profile: TimingProfile): ExpectationInputs {
  return expectationInputs({
    profile,
    eviction: profile.simKubelet,
    latencies: SIM_DEFAULT_LATENCIES,
    volumeAttachRequired: true,
    // The sim's kube-controller-manager log is read for forced detaches.
    controllerManagerLogged: true,
  });
}

/** One expected milestone as listed: a window from the fault, or one after another milestone. */
export interface CatalogueRow {
  name: string;
  /** "1s–11s", "never", or "+0s–24s" for a window after `after`. */
  window: string;
  /** The milestone the window follows, when it is not resolved from the fault. */
  after?: string;
  why: string;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)}s`;
}

/** A window since the fault: "2s–5s", or "never". */
export function faultWindow(minMs: number, maxMs: number | null): string {
  return maxMs === null ? "never" : `${seconds(minMs)}–${seconds(maxMs)}`;
}

/** A window relative to its anchor: "+2s–5s", or "-1s–5s" for one that opens before it. */
export function relativeWindow(minMs: number, maxMs: number | null): string {
  if (maxMs === null) return "never";
  return `${minMs < 0 ? "-" : "+"}${seconds(Math.abs(minMs))}–${seconds(maxMs)}`;
}

/** The rows `rekindle list` prints for one scenario: windows resolved from the fault first, then relative ones. */
export function catalogueRows(expected: readonly ExpectedMilestone[]): CatalogueRow[] {
  const nominal = nominalWindows(expected, { "fault-injected": 0 });
  const rows: CatalogueRow[] = nominal.map((w) => ({
    name: w.name,
    window: faultWindow(w.minMs, w.maxMs),
    why: expected.find((e) => e.name === w.name)?.why ?? "",
  }));
  for (const e of expected.filter((x) => !nominal.some((w) => w.name === x.name))) {
    rows.push({
      name: e.name,
      window: relativeWindow(e.minMs, e.maxMs),
      after: e.after,
      why: e.why,
    });
  }
  return rows;
}

/** Text safe inside a markdown table cell: no pipe, no line break, no HTML. */
function cell(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/\|/g, "\\|")
    .replace(/\s*\n\s*/g, " ");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

export interface CatalogueOptions {
  /** Profiles to list, one section each, in this order. */
  profiles: readonly TimingProfile[];
  /** Families to list, in this order (default: every family, as `suites/index.ts` lists them). */
  families?: readonly SuiteFamily[];
}

function profileSection(profile: TimingProfile, families: readonly SuiteFamily[]): string[] {
  const inputs = listExpectationInputs(profile);
  const scenarios = families.flatMap((family) => SCENARIOS[family]);
  const lines = [`## Profile \`${profile.name}\``, ""];
  for (const scenario of scenarios) {
    const heading = `${scenario.id} (${profile.name})`;
    lines.push(`- [${scenario.id}](#${anchor(heading)}): ${cell(scenario.title)}`);
  }
  lines.push("");
  for (const scenario of scenarios) {
    lines.push(`### ${scenario.id} (${profile.name})`, "", cell(scenario.title), "");
    const note = scenario.note?.(inputs);
    if (note !== undefined) lines.push(`Note: ${cell(note)}`, "");
    if (scenario.requires.length > 0)
      lines.push(`Needs: ${scenario.requires.map((r) => `\`${r}\``).join(", ")} faults.`, "");
    const rows = catalogueRows(scenario.expected(inputs));
    if (rows.length === 0) {
      lines.push("No expected milestones.", "");
      continue;
    }
    lines.push("| milestone | expected | why |", "| --- | --- | --- |");
    for (const row of rows) {
      const window = row.after === undefined ? row.window : `${row.window} after \`${row.after}\``;
      lines.push(`| \`${row.name}\` | ${window} | ${cell(row.why)} |`);
    }
    lines.push("");
  }
  return lines;
}

/** The whole catalogue page: an introduction, then one section per profile. */
export function scenarioCatalogue(options: CatalogueOptions): string {
  const families = options.families ?? (Object.keys(SCENARIOS) as SuiteFamily[]);
  const lines = [
    "# Scenario catalogue",
    "",
    "<!-- generated by `rekindle list --markdown` (npm run docs); do not edit by hand -->",
    "",
    "Every scenario and the window the expected-timeline model gives each milestone, with the knob or",
    "mechanism behind it. Windows are the sim provider's (kind differs only in pod start and volume",
    "attach latency) and already include the profile's slack. Times are from the fault; `+a–b after",
    "m` is a window after milestone `m`; `never` is a milestone that must not happen. Regenerate",
    "with `npm run docs`; a unit test fails when this page is stale.",
    "",
    `Profiles: ${options.profiles.map((p) => `[${p.name}](#${anchor(`Profile ${p.name}`)})`).join(" · ")}`,
    "",
  ];
  for (const profile of options.profiles) lines.push(...profileSection(profile, families));
  return `${lines.join("\n").trimEnd()}\n`;
}
