import { readFileSync } from "node:fs";
import { expect } from "chai";
import { timelineSvg } from "../../lib/report/chart.js";
import { AGGREGATE_ABOVE_NODES } from "../../lib/report/chart-rows.js";
import { largeClusterInput, threeNodeInput } from "../support/chart-inputs.js";

/** The row labels of a chart, top to bottom: the end-anchored texts at the label column's x. */
function rowLabels(svg: string): string[] {
  const texts = [...svg.matchAll(/<text x="([\d.]+)" y="(\d+)" text-anchor="end">([^<]*)<\/text>/g)];
  const labelX = texts.find((t) => t[3] === "fault-injected")?.[1];
  return texts.filter((t) => t[1] === labelX).map((t) => t[3] ?? "");
}

/** A zone's aggregate rows, in their order: its state, then its nodes' milestones. */
function aggregateRows(zone: string): string[] {
  return [
    `${zone}: zone state`,
    `${zone}: last-lease-renewal`,
    `${zone}: node-ready-unknown`,
    `${zone}: taint-added:node.kubernetes.io/unreachable`,
  ];
}

describe("timeline chart: per-zone aggregation", () => {
  it("draws a 3-node timeline exactly as before aggregation existed", function () {
    // The fixture is the output of chart.ts before this change, for the same input.
    const before = readFileSync(
      new URL("../fixtures/charts/three-node-timeline.svg", import.meta.url),
      "utf8",
    );
    expect(timelineSvg(threeNodeInput())).to.equal(before);
  });

  it(`keeps a row per milestone up to ${AGGREGATE_ABOVE_NODES} nodes, and aggregates above`, function () {
    const input = largeClusterInput();
    const rowsWith = (nodes: number) => {
      const keep = new Set(Array.from({ length: nodes }, (_, i) => `worker-a-${String(i).padStart(3, "0")}`));
      const milestones = input.milestones.filter(
        (m) => !m.name.includes("@") || keep.has(m.name.split("@")[1] ?? ""),
      );
      return rowLabels(timelineSvg({ ...input, milestones, checks: [] }));
    };
    // 6 nodes × 3 milestones of their own, plus 3 global and 2 zone states of zone-a (+ judged-taint-1).
    expect(rowsWith(AGGREGATE_ABOVE_NODES)).to.have.length(6 * 3 + 4 + 3);
    expect(rowsWith(AGGREGATE_ABOVE_NODES + 1)).to.deep.equal([
      "last-lease-renewal",
      "fault-injected",
      "node-ready-unknown",
      "judged-taint-1",
      ...aggregateRows("zone-a"),
      "zone-b: zone state",
    ]);
  });

  describe("300 nodes in 3 zones, 52 of them faulted, 2 judged on their own", () => {
    const svg = timelineSvg(largeClusterInput());
    const labels = rowLabels(svg);

    it("has per-zone aggregate rows plus the judged nodes' own rows, in time order", function () {
      expect(labels).to.deep.equal([
        "last-lease-renewal",
        "last-lease-renewal@worker-a-007",
        "fault-injected",
        "node-ready-unknown@worker-a-007",
        "last-lease-renewal@worker-b-003",
        "node-ready-unknown",
        "zone-state:zone-a:PartialDisruption",
        "taint-added:node.kubernetes.io/unreachable@worker-a-007",
        "node-ready-unknown@worker-b-003",
        "taint-added:node.kubernetes.io/unreachable@worker-b-003",
        "judged-taint-1",
        ...aggregateRows("zone-a"),
        ...aggregateRows("zone-b"),
      ]);
      // Not one of the 156 per-node rows of the others, and a chart height to match its rows.
      expect(svg).not.to.include(">node-ready-unknown@worker-a-008<");
      expect(svg).to.match(new RegExp(`height="${64 + labels.length * 24 + 50}"`));
    });

    it("counts each zone's nodes against the zone's size, first to last", function () {
      // zone-a: 39 nodes (40 less the judged one), i = 0..39 but 7: Unknown at 6000 + 250 i ms.
      expect(svg).to.include(">39 of 100 nodes, 6.0s–15.8s</text>");
      expect(svg).to.include(">11 of 100 nodes, 16.0s–18.8s</text>");
      expect(svg.match(/class="zone-nodes"/g)).to.have.length(6);
    });

    it("draws each zone's states in order, the window of the one an expected window names kept", function () {
      expect(svg).to.include("zone-a: Normal at 1.0s").and.include("zone-a: PartialDisruption at 15.0s");
      expect(svg).to.include("zone-b: PartialDisruption at 21.0s");
      expect(svg).to.include("zone-state:zone-a:PartialDisruption: expected 55 %");
    });
  });

  it("says (no zone) and counts alone when the run recorded no zones", function () {
    const input = largeClusterInput();
    const milestones = input.milestones.map(({ name, atMs }) => ({ name, atMs }));
    const svg = timelineSvg({ title: "t", subtitle: "s", milestones, checks: [] });
    const labels = rowLabels(svg);
    expect(labels).to.include("(no zone): node-ready-unknown");
    expect(svg).to.include(">52 nodes, 6.0s–18.8s</text>");
  });
});
