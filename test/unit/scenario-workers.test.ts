import { expect } from "chai";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { scenarioWorkers } from "../../lib/run/sim-size.js";
import { familyGroups, workerShortfall, type ScenarioGroup } from "../../lib/run/suite.js";
import type { ClusterUnderTest } from "../../lib/cluster/provider.js";
import type { ScenarioDefinition } from "../../lib/scenario/harness.js";

const fast = TIMING_PROFILES.fast;

function group(name: string, definitions: readonly Partial<ScenarioDefinition>[]): ScenarioGroup {
  return {
    name,
    file: name,
    scenarios: definitions.map((d, i) => ({
      definition: { id: `${name}/s${i}`, title: `s${i}`, ...d } as ScenarioDefinition,
    })),
  };
}

describe("a sim sized to the scenarios (minWorkers)", function () {
  it("zone-disruption alone: the most its scenarios need (12 at fast, 52 at default)", function () {
    expect(scenarioWorkers(familyGroups(["zone-disruption"]), fast)).to.equal(12);
    expect(scenarioWorkers(familyGroups(["zone-disruption"]), TIMING_PROFILES.default)).to.equal(52);
    // --scenario narrows the selection, and the size with it.
    expect(scenarioWorkers(familyGroups(["zone-disruption"]), fast, "small-zone")).to.equal(6);
  });

  it("mixed with scenarios written for the default layout, or none naming a size: the default", function () {
    expect(scenarioWorkers(familyGroups(["zone-disruption", "zone-outage"]), fast)).to.equal(undefined);
    expect(scenarioWorkers(familyGroups(["node-loss"]), fast)).to.equal(undefined);
    expect(scenarioWorkers([group("g", [{ minWorkers: () => 2 }])], fast)).to.equal(undefined);
    expect(scenarioWorkers([group("g", [{ minWorkers: () => 7 }, { minWorkers: () => 4 }])], fast)).to.equal(
      7,
    );
  });

  it("a cluster with fewer workers skips the scenario, saying how to run it", async function () {
    const cluster = {
      provider: "sim",
      profile: fast,
      workerNodes: () => Promise.resolve(["worker-1", "worker-2", "worker-3"]),
    } as unknown as ClusterUnderTest;
    const [large] =
      familyGroups(["zone-disruption"])[0]?.scenarios.filter((s) =>
        s.definition.id.endsWith("large-zone-partial"),
      ) ?? [];
    if (!large) throw new Error("no large-zone-partial");
    const reason = await workerShortfall(cluster, large.definition);
    expect(reason).to.include("needs 12 workers at profile fast, the cluster has 3");
    expect(reason).to.include("--suite zone-disruption");
    expect(await workerShortfall(cluster, { id: "x/y" } as ScenarioDefinition)).to.equal(undefined);
  });
});
