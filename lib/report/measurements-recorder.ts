// The measurements page's rendering of bench/recorder.ts's files: per phase (at rest, one node
// loss, a long wait), the bench process's CPU and memory and what the recorder held.
type Json = Record<string, unknown>;

function record(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function text(value: unknown): string {
  return typeof value === "number" || typeof value === "string" ? String(value) : "—";
}

const PHASES = [
  ["rest", "at rest"],
  ["nodeLoss", "one node lost and back"],
  ["waiting", "awaiting a milestone that never comes"],
] as const;

/** A recorder-<N>w-… file's numbers, as markdown lines. */
export function recorderNumbers(content: Json): string[] {
  const rows = PHASES.map(([key, label]) => {
    const phase = record(content[key]);
    const usage = record(phase.usage);
    const afterGc = record(phase.afterGc);
    return [
      label,
      `${text(usage.seconds)} s`,
      `${text(usage.cpuPercentOfOneCore)} %`,
      `${text(afterGc.rssMB)} / ${text(afterGc.heapUsedMB)} MB`,
      `${text(phase.storedTransitions)} (${text(phase.storedLeaseRenewals)} renewals)`,
      text(phase.countedLeaseRenewals),
      text(phase.milestoneDerivations),
    ];
  });
  const before = record(content.beforeRecorder);
  const loss = record(content.nodeLoss);
  return [
    `${text(content.workers)} workers in ${text(content.zones)} zones, ${text(content.label)} code; the bench process before the recorder: ${text(before.rssMB)} MB RSS, ${text(before.heapUsedMB)} MB heap. Node lost: ${text(loss.node)}, Ready=Unknown at ${text(loss.nodeReadyUnknownMs)} ms, Ready again at ${text(loss.nodeReadyAgainMs)} ms.`,
    "",
    "Stored, counted and derivations are totals since the recorder started, at the end of each phase; — is a number the code measured did not keep.",
    "",
    "| phase | length | CPU (one core) | RSS / heap after GC | stored transitions | counted renewals | milestone derivations |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ];
}
