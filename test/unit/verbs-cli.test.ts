// The verbs' and the rails' bad input through the CLI, in-process: exit 2 naming what is wrong and
// what is valid, before any cluster is reached; --help on each.
import { expect } from "chai";
import { cli } from "../support/cli-capture.js";
import { startFakeApiServer } from "../support/fake-apiserver.js";

describe("rekindle node / up / down and run's rails: bad input", () => {
  it("an unknown verb names the valid ones", async () => {
    const result = await cli(["node", "reboot", "worker-1", "--provider", "sim"]);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.contain(
      'unknown node verb "reboot"; valid: stop, start, partition, heal, pressure',
    );
  });

  it("a node fault on an existing cluster needs --allow-faults", async () => {
    const result = await cli([
      "node",
      "partition",
      "worker-1",
      "--provider",
      "existing",
      "--kubeconfig",
      "/nonexistent",
    ]);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.contain("needs --allow-faults");
  });

  it("--for outside 30s..1h, --kind off pressure, and two node names are refused", async () => {
    expect((await cli(["node", "stop", "w", "--provider", "sim", "--for", "61m"])).stderr).to.contain(
      "valid: from 30s to 1h",
    );
    expect((await cli(["node", "stop", "w", "--provider", "sim", "--kind", "disk"])).stderr).to.contain(
      "--kind is for rekindle node pressure",
    );
    expect((await cli(["node", "pressure", "w", "--provider", "sim", "--kind", "cpu"])).stderr).to.contain(
      'unknown pressure kind "cpu"; valid: memory, disk',
    );
    expect((await cli(["node", "stop", "a", "b", "--provider", "sim"])).code).to.equal(2);
  });

  it("run: the rails flags need --allow-faults, and --allow-faults needs existing and a node choice", async () => {
    const noAllow = await cli([
      "run",
      "--provider",
      "existing",
      "--nodes",
      "w",
      "--kubeconfig",
      "/nonexistent",
    ]);
    expect(noAllow.code).to.equal(2);
    const sim = await cli(["run", "--provider", "sim", "--allow-faults", "--nodes", "w"]);
    expect(sim.code).to.equal(2);
    expect(sim.stderr).to.contain("--allow-faults is for --provider existing");
    const bare = await cli(["run", "--provider", "sim", "--allow-faults"]);
    expect(bare.stderr).to.contain("--allow-faults needs the nodes it allows");
  });

  it("run: --storage-class is for existing and kind; on kind one of its two classes", async () => {
    const sim = await cli(["run", "--provider", "sim", "--storage-class", "rekindle-csi"]);
    expect(sim.code).to.equal(2);
    expect(sim.stderr).to.contain("--storage-class is for --provider existing or --provider kind");
    const kind = await cli(["run", "--provider", "kind", "--storage-class", "standard"]);
    expect(kind.code).to.equal(2);
    expect(kind.stderr).to.contain('--storage-class "standard"');
    expect(kind.stderr).to.contain("rekindle-csi, rekindle-shared");
  });

  it("run: --fence-config and --controller-image are for existing, and --fence-config needs --allow-faults", async () => {
    const sim = await cli(["run", "--provider", "sim", "--fence-config", "fence.yaml"]);
    expect(sim.code).to.equal(2);
    expect(sim.stderr).to.contain("--fence-config is for --provider existing");
    const image = await cli(["run", "--provider", "kind", "--controller-image", "x:1"]);
    expect(image.code).to.equal(2);
    expect(image.stderr).to.contain("--controller-image is for --provider existing");
    const api = await startFakeApiServer({
      "GET /api/v1/nodes": () => ({ body: { kind: "NodeList", apiVersion: "v1", metadata: {}, items: [] } }),
    });
    try {
      const noFaults = await cli([
        "run",
        "--provider",
        "existing",
        "--kubeconfig",
        api.kubeconfigPath,
        "--fence-config",
        "fence.yaml",
      ]);
      expect(noFaults.code).to.equal(2);
      expect(noFaults.stderr).to.contain(
        "--fence-config fence.yaml is for faults on this cluster, which are not allowed",
      );
    } finally {
      await api.close();
    }
  });

  it("run: a --fault-deadline too short for the profile's fault is bad input, before anything starts", async () => {
    const api = await startFakeApiServer({});
    try {
      const result = await cli([
        "run",
        "--provider",
        "existing",
        "--kubeconfig",
        api.kubeconfigPath,
        "--allow-faults",
        "--nodes",
        "w",
        "--fault-deadline",
        "2m",
      ]);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.contain(
        "--fault-deadline 120s is too short for the fault; valid: from 410s to 3600s",
      );
      expect(api.requests).to.deep.equal([]);
    } finally {
      await api.close();
    }
  });

  it("answers --help for up, node and down", async () => {
    for (const command of ["up", "node", "down"]) {
      const result = await cli([command, "--help"]);
      expect(result.code, command).to.equal(0);
      expect(result.stdout, command).to.contain(`rekindle ${command}`);
    }
  });
});
