// Test helper process: a run that dies mid-fault. Attaches to the sim cluster at <root>, partitions
// <node> through a journalled fault handle, prints "FAULTED <fault id>", then waits to be killed.
import { SimCluster } from "../../lib/cluster/sim/cluster.js";
import { SimClusterUnderTest } from "../../lib/cluster/sim/under-test.js";
import { FaultInjector } from "../../lib/fault/injector.js";
import { ConfigMapJournal } from "../../lib/fault/journal.js";

const [root, node] = process.argv.slice(2);
if (root === undefined || node === undefined) throw new Error("usage: hold-fault <sim root> <node>");
const sim = new SimClusterUnderTest(SimCluster.open(root), { keep: true });
const injector = new FaultInjector({
  capabilities: sim.capabilities,
  runId: "killed-run",
  undo: { registerUndo: () => undefined },
  journal: ConfigMapJournal.forCluster(sim.kubeConfig()),
  locator: sim.faultLocator(),
});
const handle = await injector.inject({ action: { kind: "partition" }, nodes: [node] });
process.stdout.write(`FAULTED ${handle.id}\n`);
setInterval(() => undefined, 60_000);
