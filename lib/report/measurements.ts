// The measurements page (docs/measurements.md), generated from bench/results/*.json. A number is
// published only with what makes it reproducible and comparable: the command that produced it, the
// machine, the date, the git sha and the run count. A file missing any of them is listed with what
// it lacks instead of its numbers.
import { controllerFlagsNumbers, watchFloorNumbers } from "./measurements-controller.js";
import { recorderNumbers } from "./measurements-recorder.js";
import { gateNumbers, unitStressNumbers } from "./measurements-tests.js";
import { cell, isRecord, minutes, rowsOf, table, type Json } from "./results-table.js";

export { minutes } from "./results-table.js";

/** A results file as read from bench/results/: its base name and parsed JSON. */
export interface ResultsFile {
  name: string;
  content: unknown;
}

/** What a number needs before it is published. */
export const REQUIRED_FACTS = ["command", "machine", "date", "git sha", "run count"] as const;
export type RequiredFact = (typeof REQUIRED_FACTS)[number];

export interface Provenance {
  command: string;
  machine: string;
  date: string;
  gitSha: string;
  runs: string;
}

function machineText(value: unknown): string | undefined {
  if (typeof value === "string" && value.trim() !== "") return value;
  if (!isRecord(value)) return undefined;
  const parts: string[] = [];
  if (typeof value.cores === "number") parts.push(`${value.cores} cores`);
  if (typeof value.memoryGiB === "number") parts.push(`${value.memoryGiB} GiB`);
  for (const key of ["os", "kernel"]) if (typeof value[key] === "string") parts.push(value[key]);
  if (typeof value.node === "string") parts.push(`Node ${value.node}`);
  return parts.length > 0 ? parts.join(", ") : undefined;
}

function runsText(content: Json): string | undefined {
  for (const key of ["runs", "repeat"]) {
    const value = content[key];
    if (typeof value === "number" && value > 0) return String(value);
    if (typeof value === "string" && value.trim() !== "") return value;
    if (isRecord(value)) {
      const counts = Object.entries(value).filter(([, n]) => typeof n === "number");
      if (counts.length > 0) return counts.map(([k, n]) => `${k} ${String(n)}`).join(", ");
    }
  }
  return undefined;
}

function matching(value: unknown, pattern: RegExp): string | undefined {
  return typeof value === "string" && pattern.test(value) ? value : undefined;
}

function shaText(content: Json): string | undefined {
  const sha = matching(content.gitSha, /^[0-9a-f]{7,40}$/);
  return sha === undefined ? undefined : `${sha}${content.gitDirty === true ? " (dirty tree)" : ""}`;
}

/** How each fact is read from a file: its content, or for the date also its name. */
const FACT_READERS: Record<RequiredFact, (content: Json, name: string) => string | undefined> = {
  command: (c) => matching(c.command, /\S/),
  machine: (c) => machineText(c.machine),
  date: (c, name) => matching(c.date, /^\d{4}-\d{2}-\d{2}/) ?? /-(\d{4}-\d{2}-\d{2})\.json$/.exec(name)?.[1],
  "git sha": shaText,
  "run count": runsText,
};

/** The file's five facts, or the names of those it lacks. */
export function provenanceOf(file: ResultsFile): { provenance: Provenance } | { missing: RequiredFact[] } {
  const content = isRecord(file.content) ? file.content : {};
  const facts = new Map(REQUIRED_FACTS.map((fact) => [fact, FACT_READERS[fact](content, file.name)]));
  const missing = REQUIRED_FACTS.filter((fact) => facts.get(fact) === undefined);
  if (missing.length > 0) return { missing };
  const fact = (name: RequiredFact) => facts.get(name) ?? "";
  return {
    provenance: {
      command: fact("command"),
      machine: fact("machine"),
      date: fact("date"),
      gitSha: fact("git sha"),
      runs: fact("run count"),
    },
  };
}

function sec(ms: unknown): string {
  return typeof ms === "number" ? `${(ms / 1000).toFixed(1)} s` : "—";
}

/** A calibration row's time: median (min–max) since the ranges were kept, the bare p50 before. */
function calibrationTime(spread: unknown, p50Ms: unknown): string {
  if (!isRecord(spread)) return sec(p50Ms);
  return `${sec(spread.p50)} (${sec(spread.min)}–${sec(spread.max)})`;
}

function p50max(stats: unknown): string {
  return isRecord(stats) ? `${sec(stats.p50)} / ${sec(stats.max)}` : "never";
}

/** "p50 / p99 ms (n)" of a latency summary, "—" without one. */
function p50p99(stats: unknown): string {
  if (!isRecord(stats)) return "—";
  return `${String(stats.p50)} / ${String(stats.p99)} ms (n ${String(stats.n)})`;
}

/** bench/controller.ts's file: the controller at rest and its decision latency per incident. */
function controllerNumbers(content: Json): string[] {
  const rest = isRecord(content.rest) ? content.rest : {};
  const rates = isRecord(rest.requestsPerSecond) ? rest.requestsPerSecond : {};
  const afterGc = isRecord(rest.afterGc) ? rest.afterGc : {};
  const rows: string[][] = [
    ["at rest: CPU (% of one core)", String(rest.cpuPercentOfOneCore)],
    [
      "at rest: RSS at the window's end / after a full GC / before the controller started (after a GC)",
      `${String(rest.rssMB)} / ${String(afterGc.rssMB)} / ${String(rest.rssBeforeControllerMB)} MB`,
    ],
    [
      "at rest: V8 heap used after a full GC / before the controller started",
      `${String(afterGc.heapUsedMB)} / ${String(rest.heapUsedBeforeControllerMB)} MB`,
    ],
    [
      "at rest: requests per second",
      Object.entries(rates)
        .map(([kind, n]) => `${kind} ${String(n)}`)
        .join(", "),
    ],
    ["at rest: response bytes per second", String(rest.bytesPerSecond)],
  ];
  const shipped = isRecord(rest.shipped) ? rest.shipped : undefined;
  if (shipped) {
    rows.unshift([
      "at rest, the shipped controller alone (compiled, its own process): CPU (% of one core) / RSS at the end / peak",
      `${String(shipped.cpuPercentOfOneCore)} / ${String(shipped.rssMB)} / ${String(shipped.peakRssMB)} MB`,
    ]);
  }
  const incidents: [string, unknown][] = [
    ["one node lost", isRecord(content.singleLoss) ? content.singleLoss.summary : undefined],
    ["zone outage", isRecord(content.zoneOutage) ? content.zoneOutage.summary : undefined],
  ];
  for (const [what, summary] of incidents) {
    if (!isRecord(summary)) continue;
    const label = `${what} (${String(summary.lost)} nodes)`;
    rows.push(
      [`${label}: decision after the last renewal, p50 / p99`, p50p99(summary.fromRenewalMs)],
      [`${label}: decision after the rule's threshold, p50 / p99`, p50p99(summary.afterThresholdMs)],
      [
        `${label}: in the controller's log, power read off / decided, after the last renewal, p50 / p99`,
        `${p50p99(summary.readOffFromRenewalMs)}; ${p50p99(summary.decidedInProcessFromRenewalMs)}`,
      ],
      [`${label}: decisions`, cell(summary.byReason)],
    );
    if (isRecord(summary.decidedInProcessAfterThresholdMs)) {
      rows.push(
        [`${label}: decisions by rule`, cell(summary.byRule)],
        [
          `${label}: decided (the controller's log) after the rule's threshold / its Event after that, p50 / p99`,
          `${p50p99(summary.decidedInProcessAfterThresholdMs)}; ${p50p99(summary.eventAfterDecidedMs)}`,
        ],
      );
    }
  }
  const outage =
    isRecord(content.zoneOutage) && isRecord(content.zoneOutage.usage) ? content.zoneOutage.usage : undefined;
  if (outage)
    rows.push([
      "zone outage: CPU (% of one core), peak RSS",
      `${String(outage.cpuPercentOfOneCore)} %, ${String(outage.peakRssMB)} MB over ${sec(Number(outage.seconds) * 1000)}`,
    ]);
  return table(
    [`${String(content.workers)} workers, ${String(content.podsPerNode)} pods per node`, "value"],
    rows,
  );
}

/**
 * bench:recovery's rows; files that record where the StatefulSet + RWO volume's time went (the
 * out-of-service taint, the attach on the new node, the kubelet's part after it) add a table of it.
 */
function recoveryNumbers(content: Json): string[] {
  const rows = rowsOf(content, "rows");
  const recovered = table(
    [
      "scenario",
      "outcome",
      "runs",
      "Deployment p50 / max",
      "StatefulSet p50 / max",
      "StatefulSet + RWO volume p50 / max",
    ],
    rows.map((r) => [
      String(r.scenario),
      String(r.outcome),
      String(r.runs),
      p50max(r.deploymentRecoveredMs),
      p50max(r.plainStatefulSetRecoveredMs),
      p50max(r.statefulSetRecoveredMs),
    ]),
  );
  const split = rows.filter((r) => isRecord(r.statefulSetRunningAfterAttachMs));
  if (split.length === 0) return recovered;
  return [
    ...recovered,
    "",
    ...table(
      [
        "scenario",
        "out-of-service taint p50 / max",
        "old pod gone p50 / max",
        "attached to the new node p50 / max",
        "running after the attach p50 / max",
      ],
      split.map((r) => [
        String(r.scenario),
        p50max(r.outOfServiceTaintMs),
        p50max(r.statefulSetPodGoneMs),
        p50max(r.statefulSetAttachedElsewhereMs),
        p50max(r.statefulSetRunningAfterAttachMs),
      ]),
    ),
  ];
}

/** bench/run-wall.ts: one whole `rekindle run`, and its longest scenarios. */
function runWallNumbers(content: Json): string[] {
  const cores = isRecord(content.machineCores) ? content.machineCores : {};
  const memory = isRecord(content.memoryGiB) ? content.memoryGiB : {};
  const head = table(
    [
      "wall time",
      "outcome",
      "clusters",
      "machine cores, mean / busiest sample",
      "memory in use, before / peak",
    ],
    [
      [
        minutes(content.wallMs),
        String(content.outcome),
        `${String(content.clusters)} (${String(content.chosenBy)})`,
        `${String(cores.mean)} / ${String(cores.peakSample)}`,
        `${String(memory.before)} / ${String(memory.peak)} GiB`,
      ],
    ],
  );
  const spans = rowsOf(content, "scenarios")
    .filter((s) => typeof s.spanMs === "number")
    .sort((a, b) => Number(b.spanMs) - Number(a.spanMs));
  const longest = spans
    .slice(0, 5)
    .map((s) => `${String(s.id)} ${minutes(s.spanMs)}`)
    .join("; ");
  return [
    ...head,
    "",
    `Scenario spans (setup and undo included) sum to ${minutes(content.scenarioSpanSumMs)}; the longest: ${longest || "—"}.`,
  ];
}

/** Renderers of files whose numbers take no more than their content, by the name's prefix. */
const RENDERERS: readonly (readonly [RegExp, (content: Json) => string[]])[] = [
  [/^controller-\d+w-/, controllerNumbers],
  [/^recorder-\d+w-/, recorderNumbers],
  [/^recovery-/, recoveryNumbers],
  [/^watch-floor-/, watchFloorNumbers],
  [/^controller-flags-/, controllerFlagsNumbers],
  [/^unit-stress-/, unitStressNumbers],
  [/^gate-/, gateNumbers],
  [/^run-/, runWallNumbers],
];

/** The numbers of one file, by the bench script that wrote it (its name's prefix). */
function numbers(name: string, content: Json): string[] {
  const renderer = RENDERERS.find(([pattern]) => pattern.test(name))?.[1];
  if (renderer !== undefined) return renderer(content);
  if (name.startsWith("sim-start-")) {
    const rss = isRecord(content.rssMiB) ? Object.entries(content.rssMiB) : [];
    return table(
      ["what", "p50", "max"],
      [
        [
          `start of a ${typeof content.workers === "number" ? String(content.workers) : "?"}-worker cluster to nodes Ready and node DaemonSets running${typeof content.podsPerNode === "number" && content.podsPerNode > 0 ? `, ${String(content.podsPerNode)} filler pods per shared-kwok worker Running` : ""} (cached binaries)`,
          sec(isRecord(content.startMs) ? content.startMs.p50 : undefined),
          sec(isRecord(content.startMs) ? content.startMs.max : undefined),
        ],
        ...rss.map(([k, s]) => [
          `RSS ${k}`,
          isRecord(s) ? `${String(s.p50)} MiB` : "—",
          isRecord(s) ? `${String(s.max)} MiB` : "—",
        ]),
        ...(isRecord(content.totalRssMiB)
          ? [
              [
                "RSS total",
                `${String(content.totalRssMiB.p50)} MiB`,
                `${String(content.totalRssMiB.max)} MiB`,
              ],
            ]
          : []),
        ...(isRecord(content.restCores) ? Object.entries(content.restCores) : []).map(([k, s]) => [
          `CPU at rest ${k} (cores, over ${String(content.restSeconds)} s)`,
          isRecord(s) ? String(s.p50) : "—",
          isRecord(s) ? String(s.max) : "—",
        ]),
      ],
    );
  }
  if (name.startsWith("sim-hostile-"))
    return table(
      ["condition", "observed for", "node changes"],
      rowsOf(content, "observations").map((o) => [
        String(o.what),
        sec(o.durationMs),
        Array.isArray(o.nodeChanges)
          ? o.nodeChanges
              .filter(isRecord)
              .map((c) => `+${sec(c.atMs)} ${String(c.node)} ${String(c.change)}`)
              .join("; ") || "none"
          : "—",
      ]),
    );
  if (name.startsWith("calibration-"))
    return table(
      ["scenario", "milestone", "sim p50", "kind p50", "flagged"],
      rowsOf(content, "rows").map((r) => [
        String(r.scenario),
        `\`${String(r.milestone)}\``,
        calibrationTime(r.sim, r.simMs),
        calibrationTime(r.kind, r.kindMs),
        r.flagged === true ? "yes" : "",
      ]),
    );
  if (name.startsWith("parallel-"))
    return table(
      ["run", "clusters", "outcome", "wall time", "conditions"],
      rowsOf(content, "rows").map((r) => [
        String(r.run),
        String(r.clusters),
        String(r.outcome),
        minutes(r.totalMs),
        typeof r.conditions === "string" ? r.conditions : "",
      ]),
    );
  return ["(no renderer for this kind of results file: see the file itself)"];
}

/** The whole page, files in name order. */
export function measurementsPage(files: readonly ResultsFile[]): string {
  const sorted = [...files].sort((a, b) => a.name.localeCompare(b.name));
  const lines = [
    "# Measurements",
    "",
    "<!-- generated from bench/results/*.json by `npm run docs`; do not edit by hand -->",
    "",
    "Every number here comes from a file in `bench/results/`, written by a benchmark in `bench/`.",
    `A file is published only when it records all of: ${REQUIRED_FACTS.join(", ")}. A file that`,
    "lacks one is listed as not published, with what it lacks, and its numbers are not repeated here",
    "or anywhere else in the docs. Regenerate with `npm run docs`; a unit test fails when this page is",
    "stale.",
    "",
  ];
  const published = sorted.map((f) => ({ file: f, facts: provenanceOf(f) }));
  const notPublished = published.filter((p) => "missing" in p.facts);
  lines.push(
    `${String(published.length - notPublished.length)} of ${String(published.length)} results files published.`,
    "",
  );
  for (const { file, facts } of published) {
    if (!("provenance" in facts)) continue;
    const p = facts.provenance;
    const content = isRecord(file.content) ? file.content : {};
    lines.push(`## ${file.name}`, "");
    lines.push(`- command: \`${p.command}\``, `- machine: ${p.machine}`, `- date: ${p.date}`);
    lines.push(`- git sha: ${p.gitSha}`, `- runs: ${p.runs}`);
    if (typeof content.profile === "string") lines.push(`- profile: ${content.profile}`);
    if (typeof content.provider === "string") lines.push(`- provider: ${content.provider}`);
    if (typeof content.loadAverage === "number")
      lines.push(`- load average at start: ${String(content.loadAverage)} (other work on the machine)`);
    lines.push("", ...numbers(file.name, content), "");
  }
  if (notPublished.length > 0) {
    lines.push("## Not published", "");
    for (const { file, facts } of notPublished)
      if ("missing" in facts)
        lines.push(`- \`${file.name}\`: not published: missing ${facts.missing.join(", ")}`);
    lines.push("");
  }
  return `${lines.join("\n").trimEnd()}\n`;
}
