// Which rows a timeline chart has. Today's chart has a row per milestone, and a fault of several
// nodes adds each node's own milestones ("<name>@<node>", about ten a node): past a few nodes that
// is hundreds of rows. So above AGGREGATE_ABOVE_NODES nodes in the timeline, the fault nodes'
// own milestones are folded per zone: one row per zone and milestone ("zone-a: node-ready-unknown"),
// its span from the first node to the last, a tick per node and a count ("12 of 40 nodes"); the
// zone states ("zone-state:<zone>:<State>") become one row per zone of coloured segments. A node an
// expected window names (or one the caller keeps) keeps its own rows, and every milestone an
// expected window names keeps its row: a window is never folded away. Up to the threshold the rows
// are exactly today's.
import type { WindowCheck } from "../expect/assert.js";
import { nodeOfQualified } from "../observe/milestone-names.js";

/**
 * Most nodes in a timeline charted a row per milestone, as before aggregation existed: the
 * scenarios of 2 or 3 fault nodes and the fast zone scenarios' small zones (5 nodes) stay as they
 * were; the large zone's 10 fault nodes (fast profile) are aggregated.
 */
export const AGGREGATE_ABOVE_NODES = 6;

/** A milestone as the chart reads it (summary.json's, with the node and zone when the run recorded them). */
export interface ChartMilestone {
  name: string;
  atMs: number;
  node?: string;
  zone?: string;
}

/** One node's time in an aggregated row. */
export interface NodeTime {
  node: string;
  atMs: number;
}

export type ChartRow =
  /** Today's row: one milestone, its window, its time. */
  | { kind: "milestone"; name: string }
  /** One milestone of many nodes of one zone. */
  | { kind: "zone-nodes"; zone: string; base: string; times: NodeTime[]; zoneSize?: number }
  /** One zone's state changes, in time order. */
  | { kind: "zone-states"; zone: string; changes: { state: string; atMs: number }[] };

export interface RowOptions {
  milestones: readonly ChartMilestone[];
  checks: readonly WindowCheck[];
  /** Nodes per zone when the fault started. */
  zoneSizes?: Readonly<Record<string, number>>;
  /** Nodes kept on rows of their own whatever the count. */
  keepNodes?: readonly string[];
  /** Default AGGREGATE_ABOVE_NODES. */
  aggregateAboveNodes?: number;
}

const ZONE_STATE = /^zone-state:(.*):(Initial|Normal|PartialDisruption|FullDisruption)$/;

/** How a zone is named on a row ("" is the nodes with no zone label). */
export function zoneLabel(zone: string): string {
  return zone === "" ? "(no zone)" : zone;
}

/** The label a row is drawn with, left of the plot. */
export function rowLabel(row: ChartRow): string {
  if (row.kind === "milestone") return row.name;
  if (row.kind === "zone-states") return `${zoneLabel(row.zone)}: zone state`;
  return `${zoneLabel(row.zone)}: ${row.base}`;
}

/** The distinct nodes with milestones of their own in the timeline. */
export function timelineNodes(milestones: readonly ChartMilestone[]): string[] {
  const nodes = new Set<string>();
  for (const m of milestones) {
    const node = nodeOfQualified(m.name);
    if (node !== undefined) nodes.add(node);
  }
  return [...nodes];
}

/** Each node's zone, from the milestones that carry both. */
function zonesOf(milestones: readonly ChartMilestone[]): Map<string, string> {
  const zones = new Map<string, string>();
  for (const m of milestones) {
    const node = m.node ?? nodeOfQualified(m.name);
    if (node !== undefined && m.zone !== undefined) zones.set(node, m.zone);
  }
  return zones;
}

type ZoneNodesRow = Extract<ChartRow, { kind: "zone-nodes" }>;
type ZoneStatesRow = Extract<ChartRow, { kind: "zone-states" }>;

/** The nodes whose own milestones keep their rows: those kept, and those an expected window names. */
function keptNodes(options: RowOptions): Set<string> {
  const kept = new Set(options.keepNodes ?? []);
  for (const check of options.checks) {
    const node = nodeOfQualified(check.name);
    if (node !== undefined) kept.add(node);
  }
  return kept;
}

/** The aggregated rows, grouped by zone: what is folded into them as the names are read. */
class ZoneGroups {
  readonly #nodes = new Map<string, ZoneNodesRow>();
  readonly #states = new Map<string, ZoneStatesRow>();

  constructor(
    private readonly zoneOfNode: ReadonlyMap<string, string>,
    private readonly zoneSizes: Readonly<Record<string, number>> | undefined,
  ) {}

  state(zone: string, state: string, atMs: number): void {
    const row = this.#states.get(zone) ?? { kind: "zone-states", zone, changes: [] };
    row.changes.push({ state, atMs });
    this.#states.set(zone, row);
  }

  node(name: string, node: string, atMs: number): void {
    const zone = this.zoneOfNode.get(node) ?? "";
    const base = name.slice(0, name.lastIndexOf("@"));
    const key = `${zone}\u0000${base}`;
    const size = this.zoneSizes?.[zone];
    const row: ZoneNodesRow = this.#nodes.get(key) ?? {
      kind: "zone-nodes",
      zone,
      base,
      times: [],
      ...(size !== undefined ? { zoneSize: size } : {}),
    };
    row.times.push({ node, atMs });
    this.#nodes.set(key, row);
  }

  /** Zone by zone (by name): its state row, then its milestones by their first time. */
  rows(): ChartRow[] {
    const nodeRows = [...this.#nodes.values()];
    const zones = [...new Set([...this.#states.keys(), ...nodeRows.map((r) => r.zone)])].sort();
    const first = (r: ZoneNodesRow) => Math.min(...r.times.map((t) => t.atMs));
    return zones.flatMap((zone) => {
      const state = this.#states.get(zone);
      return [
        ...(state !== undefined
          ? [{ ...state, changes: state.changes.sort((a, b) => a.atMs - b.atMs) }]
          : []),
        ...nodeRows
          .filter((r) => r.zone === zone)
          .sort((a, b) => first(a) - first(b) || a.base.localeCompare(b.base)),
      ];
    });
  }
}

/** The rows of a chart of `names` (its milestones, then its checks' names), in drawing order. */
export function chartRows(options: RowOptions, names: readonly string[]): ChartRow[] {
  const nodes = timelineNodes(options.milestones);
  if (nodes.length <= (options.aggregateAboveNodes ?? AGGREGATE_ABOVE_NODES))
    return names.map((name) => ({ kind: "milestone", name }));
  const checked = new Set(options.checks.map((c) => c.name));
  const kept = keptNodes(options);
  const at = new Map(options.milestones.map((m) => [m.name, m.atMs]));
  const groups = new ZoneGroups(zonesOf(options.milestones), options.zoneSizes);
  const rows: ChartRow[] = [];
  for (const name of names) {
    const atMs = at.get(name);
    const node = nodeOfQualified(name);
    const zoneState = ZONE_STATE.exec(name);
    // A milestone a window names keeps its row (a zone state is drawn in its zone's row as well).
    if (atMs !== undefined && zoneState !== null) groups.state(zoneState[1] ?? "", zoneState[2] ?? "", atMs);
    const folded = atMs !== undefined && node !== undefined && !kept.has(node) && !checked.has(name);
    if (folded) groups.node(name, node, atMs);
    else if (zoneState === null || checked.has(name) || atMs === undefined)
      rows.push({ kind: "milestone", name });
  }
  return [...rows, ...groups.rows()];
}
