// The sim's container start and attach latencies: validated, and written into the kwok Stages
// as a uniform delay (kwok draws each pod's start in [duration, jitterDuration)).
import { expect } from "chai";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SIM_DEFAULT_LATENCIES, validateSimOptions } from "../../lib/cluster/sim/boot/options.js";
import { writeKwokStages } from "../../lib/cluster/sim/kubelet/kwok-stages.js";
import { rekindleThrow } from "../support/assertions.js";

/** The delay block of the pod Stage that starts containers. */
function podStartDelay(stages: string): string {
  const start = stages.indexOf("# Simulated container start latency");
  expect(start, "the container start Stage").to.be.greaterThan(-1);
  return stages.slice(start, stages.indexOf("next:", start));
}

describe("the sim's container start latency", function () {
  // The unit layer removes its temporary directory after the run (test/support/unit-tmpdir.ts).
  function render(latencies: { podStartMs: number; podStartSpreadMs: number; attachMs: number }): string {
    const dir = mkdtempSync(join(tmpdir(), "rekindle-latencies-"));
    const files = { nodeStages: join(dir, "node.yaml"), attacherStages: join(dir, "attacher.yaml") };
    writeKwokStages(files, { kubernetes: "v1.34.4", etcd: "v3.6.5", kwok: "v0.8.0" }, latencies);
    return readFileSync(files.nodeStages, "utf8");
  }

  it("defaults to SIM_DEFAULT_LATENCIES and is drawn from [start, start + spread)", function () {
    const options = validateSimOptions({});
    expect(options.podStartMs).to.equal(SIM_DEFAULT_LATENCIES.podStartMs);
    expect(options.podStartSpreadMs).to.equal(SIM_DEFAULT_LATENCIES.podStartSpreadMs);
    const delay = podStartDelay(render({ podStartMs: 1400, podStartSpreadMs: 700, attachMs: 500 }));
    expect(delay).to.include("durationMilliseconds: 1400").and.include("jitterDurationMilliseconds: 2100");
  });

  it("is a fixed delay when the spread is 0", function () {
    const delay = podStartDelay(render({ podStartMs: 1000, podStartSpreadMs: 0, attachMs: 500 }));
    expect(delay).to.include("durationMilliseconds: 1000").and.include("jitterDurationMilliseconds: 1000");
  });

  it("refuses a start or spread that is not a whole number of ms up to a minute, naming it", function () {
    expect(rekindleThrow(() => validateSimOptions({ podStartMs: -1 })).message).to.include(
      "container start (ms)",
    );
    expect(rekindleThrow(() => validateSimOptions({ podStartSpreadMs: 1.5 })).message)
      .to.include("container start spread (ms)")
      .and.include("60000");
  });
});
