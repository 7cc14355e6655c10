// The check every sim test ends with: tear the cluster down, then nothing it started may be left.
import { expect } from "chai";
import type { SimCluster } from "../../lib/cluster/sim/cluster.js";
import { kwokProcesses } from "../../lib/cluster/sim/boot/state.js";
import { findProcessesByRunTag, isDaemonRunning } from "../../lib/util/daemon.js";

/**
 * Runs `destroy` (default: the cluster's own) and asserts that no component, kwok or other
 * process tagged with the cluster's run id outlived it. Resolves to the names of the components
 * and nodes it knew before the teardown.
 */
export async function destroyLeavingNothing(
  cluster: SimCluster,
  destroy: () => Promise<void> = () => cluster.destroy(),
): Promise<string[]> {
  const runId = cluster.runId;
  const records = [...cluster.state.components, ...kwokProcesses(cluster.state)];
  await destroy();
  expect(records.filter(isDaemonRunning).map((r) => r.name)).to.deep.equal([]);
  expect(findProcessesByRunTag(runId)).to.deep.equal([]);
  return records.map((r) => r.name);
}
