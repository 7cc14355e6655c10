import { expect } from "chai";
import { SIM_MAX_WORKERS, workerNodeIp, workerPodCidr } from "../../lib/cluster/sim/boot/addresses.js";
import { planKwoks, SIM_KWOK_GROUP_LABEL } from "../../lib/cluster/sim/kubelet/kwok-groups.js";
import { validateSimOptions } from "../../lib/cluster/sim/boot/options.js";
import {
  SIM_FLEET_LABEL,
  SIM_NODE_IP_ANNOTATION,
  sharedKwokSpec,
  workerNodeObject,
} from "../../lib/cluster/sim/boot/worker-nodes.js";
import { simLayout } from "../../lib/cluster/sim/boot/layout.js";
import { TIMING_PROFILES } from "../../lib/cluster/profiles.js";
import { checkSimSize } from "../../lib/run/sim-size.js";
import { planRun } from "../../lib/run/run-plan.js";
import { silentProgress } from "../../lib/util/progress.js";
import { nodeProcessRunning } from "../../lib/cluster/sim/boot/status.js";
import { rekindleThrow } from "../support/assertions.js";

describe("sim worker addresses", function () {
  it("keep the small-cluster addresses for the first workers", function () {
    expect(workerPodCidr(0)).to.equal("10.244.0.0/24");
    expect(workerPodCidr(255)).to.equal("10.244.255.0/24");
    expect(workerNodeIp(0)).to.equal("127.0.1.1");
    expect(workerNodeIp(253)).to.equal("127.0.1.254");
  });

  it("go on past 255 workers without .0/.255 node IPs", function () {
    expect(workerPodCidr(256)).to.equal("10.245.0.0/24");
    expect(workerPodCidr(999)).to.equal("10.247.231.0/24");
    expect(workerNodeIp(254)).to.equal("127.0.2.1");
    expect(workerNodeIp(999)).to.equal(`127.0.4.${(999 % 254) + 1}`);
  });

  it("are unique over every worker a cluster can have", function () {
    const indices = [...Array(SIM_MAX_WORKERS).keys()];
    expect(new Set(indices.map(workerPodCidr)).size).to.equal(SIM_MAX_WORKERS);
    const ips = indices.map(workerNodeIp);
    expect(new Set(ips).size).to.equal(SIM_MAX_WORKERS);
    for (const ip of ips) {
      const last = Number(ip.split(".")[3]);
      expect(last, ip).to.be.within(1, 254);
      expect(ip.startsWith("127.0.0."), ip).to.equal(false);
    }
  });

  it("refuse an index past the cap", function () {
    expect(rekindleThrow(() => workerPodCidr(SIM_MAX_WORKERS)).code).to.equal("INTERNAL");
    expect(rekindleThrow(() => workerNodeIp(-1)).code).to.equal("INTERNAL");
  });
});

describe("sim kwok grouping", function () {
  it("gives every worker its own kwok when all are dedicated (every small cluster)", function () {
    const plan = planKwoks({ workers: 3, zones: 2, dedicated: 3, nodesPerKwok: 500 });
    expect(plan.groups).to.deep.equal([]);
    expect(plan.workers.map((w) => [w.zone, w.group])).to.deep.equal([
      ["zone-a", undefined],
      ["zone-b", undefined],
      ["zone-a", undefined],
    ]);
  });

  it("puts the fleet in one kwok per zone, each group in its own zone only", function () {
    const plan = planKwoks({ workers: 1000, zones: 3, dedicated: 3, nodesPerKwok: 500 });
    expect(plan.groups.map((g) => [g.name, g.members.length])).to.deep.equal([
      ["zone-a-1", 333],
      ["zone-b-1", 332],
      ["zone-c-1", 332],
    ]);
    for (const group of plan.groups)
      for (const index of group.members) expect(plan.workers[index]?.zone).to.equal(group.zone);
    expect(plan.workers.slice(0, 3).every((w) => w.group === undefined)).to.equal(true);
    expect(plan.workers.slice(3).every((w) => w.group !== undefined)).to.equal(true);
  });

  it("splits a zone into chunks of at most nodesPerKwok", function () {
    const plan = planKwoks({ workers: 25, zones: 1, dedicated: 1, nodesPerKwok: 10 });
    expect(plan.groups.map((g) => [g.name, g.members.length])).to.deep.equal([
      ["zone-a-1", 10],
      ["zone-a-2", 10],
      ["zone-a-3", 4],
    ]);
  });
});

describe("sim fleet nodes and their kwok", function () {
  it("a fleet node carries its group label, the fleet label and its own address", function () {
    const node = workerNodeObject("worker-300", { zone: "zone-c", index: 299, group: "zone-c-1" }, "run-1");
    expect(node.metadata?.labels?.[SIM_KWOK_GROUP_LABEL]).to.equal("zone-c-1");
    expect(node.metadata?.labels?.[SIM_FLEET_LABEL]).to.equal("true");
    expect(node.metadata?.annotations?.[SIM_NODE_IP_ANNOTATION]).to.equal(workerNodeIp(299));
    expect(node.spec?.podCIDRs).to.deep.equal([workerPodCidr(299)]);
  });

  it("a node with its own kwok carries no group label a shared kwok could select", function () {
    const node = workerNodeObject("worker-1", { zone: "zone-a", index: 0 }, "run-1");
    expect(node.metadata?.labels).to.not.have.property(SIM_KWOK_GROUP_LABEL);
    expect(node.metadata?.labels).to.not.have.property(SIM_FLEET_LABEL);
  });

  it("a shared kwok selects its group by label and logs at WARN", function () {
    const spec = sharedKwokSpec({
      group: "zone-b-1",
      kwokBinary: "/bin/kwok",
      layout: simLayout("/tmp/x"),
      profile: TIMING_PROFILES.large,
      stagesFile: "/tmp/x/stages.yaml",
    });
    expect(spec.args).to.include(`--manage-nodes-with-label-selector=${SIM_KWOK_GROUP_LABEL}=zone-b-1`);
    expect(spec.args).to.include("-v=WARN");
    expect(spec.args).to.include("--node-lease-duration-seconds=40");
  });
});

describe("sim cluster size validation", function () {
  it("keeps every worker on its own kwok up to 100 workers, 3 past that", function () {
    expect(validateSimOptions({ workers: 100, zones: 3 }).dedicatedKwoks).to.equal(100);
    expect(validateSimOptions({ workers: 101, zones: 3 }).dedicatedKwoks).to.equal(3);
    expect(validateSimOptions({ workers: 1000, zones: 3, dedicatedKwoks: 0 }).dedicatedKwoks).to.equal(0);
  });

  it("refuses sizes out of range, naming the setting and the range", function () {
    expect(rekindleThrow(() => validateSimOptions({ workers: 1001 })).message)
      .to.include("worker count")
      .and.include("from 1 to 1000");
    expect(rekindleThrow(() => validateSimOptions({ workers: 100, zones: 27 })).message).to.include(
      "zone count",
    );
    expect(rekindleThrow(() => validateSimOptions({ workers: 5, dedicatedKwoks: 6 })).code).to.equal(
      "INVALID_INPUT",
    );
    expect(rekindleThrow(() => validateSimOptions({ podsPerNode: 101 })).message).to.include(
      "filler pods per node",
    );
  });
});

describe("rekindle run's sim size flags", function () {
  it("are refused for kind and existing, naming the flags", function () {
    const error = rekindleThrow(() => {
      checkSimSize({ provider: "existing", workers: 300, podsPerNode: 5 }, undefined);
    });
    expect(error.message).to.equal(
      "--workers, --pods-per-node size a sim cluster; --provider existing does not take them",
    );
  });

  it("refuse more zones than workers", function () {
    expect(
      rekindleThrow(() => {
        checkSimSize({ workers: 2, zones: 3 }, undefined);
      }).message,
    ).to.include("valid: 1 to 2");
  });

  it("pass through to the sim cluster's spec", async function () {
    const flags = { provider: "sim", workers: "300", zones: "3", "pods-per-node": "10" };
    expect((await planRun(flags, { progress: silentProgress })).cluster).to.deep.equal({
      provider: "sim",
      workers: 300,
      zones: 3,
      podsPerNode: 10,
    });
    checkSimSize({ provider: "sim", workers: 300, zones: 3 }, undefined);
  });
});

describe("a fleet node's power as status and the fence driver read it", function () {
  const gone = { pid: 2 ** 22 + 1, startTicks: 1 }; // no such process
  const self = { pid: process.pid, startTicks: 0 }; // startTicks 0: any start time (this process: alive)
  const group = (process: typeof self) => ({
    kwokGroups: [
      {
        name: "zone-a-1",
        zone: "zone-a",
        kwok: { name: "kwok-zone-a-1", command: "kwok", args: [], logPath: "/dev/null" },
        process: {
          ...process,
          name: "kwok-zone-a-1",
          command: "kwok",
          args: [],
          logPath: "/dev/null",
          startedAt: "",
        },
      },
    ],
  });

  it("is on while its shared kwok runs, off once stopped, though that kwok runs on", function () {
    const running = group(self);
    expect(nodeProcessRunning(running, { group: "zone-a-1", process: undefined, power: "running" })).to.equal(
      true,
    );
    expect(nodeProcessRunning(running, { group: "zone-a-1", process: undefined, power: "stopped" })).to.equal(
      false,
    );
    // Partitioned: the machine is on (a fence must still power it off).
    expect(
      nodeProcessRunning(running, { group: "zone-a-1", process: undefined, power: "partitioned" }),
    ).to.equal(true);
  });

  it("is off when its shared kwok is gone", function () {
    expect(
      nodeProcessRunning(group(gone), { group: "zone-a-1", process: undefined, power: "running" }),
    ).to.equal(false);
  });
});
