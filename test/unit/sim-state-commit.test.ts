// The sim's state file is shared by every process and session that changes a node (the harness
// stopping one node while a fence driver powers off another). A node change is committed on the
// file as it is at that moment, so a session that awaited an API call since its own read does not
// write its stale copy over another's change.
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SimSession } from "../../lib/cluster/sim/boot/session.js";
import { readSimState, writeSimState, type SimClusterState } from "../../lib/cluster/sim/boot/state.js";
import { silentProgress } from "../../lib/util/progress.js";
import { simStateAt } from "../support/sim-state.js";

function stateAt(root: string): SimClusterState {
  const node = (name: string) => ({ name, zone: "zone-a", process: undefined, power: "running" as const });
  return simStateAt(root, [node("worker-1"), node("worker-2")]);
}

describe("sim state: node changes commit on the file as it is", function () {
  let root = "";
  beforeEach(function () {
    root = mkdtempSync(join(tmpdir(), "rekindle-commit-"));
    writeSimState(join(root, "state.json"), stateAt(root));
  });
  afterEach(function () {
    rmSync(root, { recursive: true, force: true });
  });

  it("two sessions that read before either wrote keep both changes", function () {
    const harness = new SimSession(stateAt(root), silentProgress, false);
    const driver = new SimSession(stateAt(root), silentProgress, false);
    harness.reload();
    driver.reload();
    // ...each awaits its API call here; the driver's power-off lands first.
    driver.commitNode("worker-2", (n) => {
      n.power = "stopped";
    });
    harness.commitNode("worker-1", (n) => {
      n.power = "stopped";
    });
    const saved = readSimState(join(root, "state.json"));
    expect(saved.nodes.map((n) => [n.name, n.power])).to.deep.equal([
      ["worker-1", "stopped"],
      ["worker-2", "stopped"],
    ]);
    expect(harness.state.nodes.find((n) => n.name === "worker-2")?.power, "the session sees it too").to.equal(
      "stopped",
    );
  });

  it("an unknown node is refused, naming the valid ones", function () {
    const session = new SimSession(stateAt(root), silentProgress, false);
    expect(() => {
      session.commitNode("worker-9", () => undefined);
    }).to.throw(/worker-9[\s\S]*worker-1/);
  });
});
