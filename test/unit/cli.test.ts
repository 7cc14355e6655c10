import { expect } from "chai";
import { cli, expectExit } from "../support/cli-capture.js";

describe("CLI input errors", function () {
  it("an unknown command exits 2 naming the valid ones", async function () {
    const { code, stderr } = await cli(["frobnicate"]);
    expect(code).to.equal(2);
    expect(stderr).to.include('unknown command "frobnicate"').and.include("sim");
  });

  it("an unknown profile exits 2 before anything starts", async function () {
    const { code, stderr } = await cli(["sim", "up", "--profile", "slow", "--name", "never-started"]);
    expect(code).to.equal(2);
    expect(stderr).to.include('unknown profile "slow"; valid: default, fast, large');
  });

  it("a bad worker count exits 2", async function () {
    const { code, stderr } = await cli(["sim", "up", "--workers", "three"]);
    expect(code).to.equal(2);
    expect(stderr).to.include("--workers takes a whole number");
  });

  it("an unknown option exits 2", async function () {
    const { code, stderr } = await cli(["sim", "up", "--nodes", "3"]);
    expect(code).to.equal(2);
    expect(stderr).to.include("--nodes");
  });

  it("more zones than workers exits 2", async function () {
    const { code, stderr } = await cli(["sim", "up", "--workers", "2", "--zones", "3"]);
    expect(code).to.equal(2);
    expect(stderr).to.include("--zones takes a whole number from 1 to 2 (the worker count)");
  });

  it("operating on a cluster that does not exist exits 1 and says how to start one", async function () {
    const { code, stderr } = await cli(["sim", "status", "--name", "no-such-cluster-here"]);
    expect(code).to.equal(1);
    expect(stderr).to.include('no sim cluster "no-such-cluster-here"').and.include("rekindle sim up");
  });
});

describe("CLI input errors of the sim faults (checked before any cluster is opened)", function () {
  const cases: [string, string[], string][] = [
    ["clock needs --offset", ["sim", "node", "clock", "worker-1"], "rekindle sim node clock needs --offset"],
    [
      "a bad --offset names it and the signed forms",
      ["sim", "node", "clock", "worker-1", "--offset", "soon"],
      '--offset "soon"; valid: a Go duration with an optional sign',
    ],
    [
      "an offset beyond a day",
      ["sim", "node", "clock", "worker-1", "--offset", "-25h"],
      "within a day either way",
    ],
    [
      "--for with offset 0",
      ["sim", "node", "clock", "worker-1", "--offset", "0", "--for", "1m"],
      "--for needs a non-zero --offset",
    ],
    [
      "a flag another action takes",
      ["sim", "node", "stop", "worker-1", "--offset", "1s"],
      "takes no --offset",
    ],
    [
      "an unknown node action lists the valid ones",
      ["sim", "node", "reboot", "worker-1"],
      'unknown node action "reboot"; valid: stop, start, partition, heal, clock, reregister',
    ],
    ["pause needs --for", ["sim", "apiserver", "pause"], "rekindle sim apiserver pause needs --for"],
    ["a zero pause", ["sim", "apiserver", "pause", "--for", "0"], "more than 0 and at most an hour"],
    ["a pause over an hour", ["sim", "apiserver", "pause", "--for", "2h"], "more than 0 and at most an hour"],
    [
      "an unknown apiserver action",
      ["sim", "apiserver", "restart"],
      'unknown apiserver action "restart"; valid: pause, resume',
    ],
    ["resume takes no --for", ["sim", "apiserver", "resume", "--for", "1s"], "takes no --for"],
  ];
  for (const [what, argv, message] of cases) {
    it(`${what}: exits 2`, async function () {
      const { code, stderr } = await cli([...argv, "--name", "no-such-cluster-here"]);
      expect(stderr).to.include(message);
      expect(code).to.equal(2);
    });
  }

  it("takes a negative --offset as the value it is (node's parseArgs alone would refuse it)", async function () {
    const { joinNegativeOffset } = await import("../../lib/cli/sim-fault-commands.js");
    expect(joinNegativeOffset(["clock", "w", "--offset", "-30s", "--step"])).to.deep.equal([
      "clock",
      "w",
      "--offset=-30s",
      "--step",
    ]);
    expect(joinNegativeOffset(["--offset", "--step"])).to.deep.equal(["--offset", "--step"]);
    // Valid input reaches the cluster lookup, which names the missing cluster.
    const argv = ["sim", "node", "clock", "worker-1", "--offset", "-30s", "--name", "no-such-cluster-here"];
    expectExit(await cli(argv), 1, 'no sim cluster "no-such-cluster-here"');
  });
});

describe("error messages", function () {
  it("API errors read as their Status message, not their headers", async function () {
    const { errorMessage } = await import("../../lib/errors.js");
    const { k8s } = await import("../../lib/kube/client.js");
    const body = JSON.stringify({
      kind: "Status",
      status: "Failure",
      message: "storage is (re)initializing",
      reason: "TooManyRequests",
      code: 429,
    });
    const error = new k8s.ApiException(429, "Unknown API Status Code!", body, {});
    expect(errorMessage(error)).to.equal("HTTP 429 TooManyRequests: storage is (re)initializing");
    expect(errorMessage(new Error("plain"))).to.equal("plain");
    expect(errorMessage("text")).to.equal("text");
  });
});

describe("CLI input errors of the sim cluster's size (checked before anything starts)", function () {
  it("--workers past 1000 exits 2 naming the flag and its range", async function () {
    const { code, stderr } = await cli(["up", "--provider", "sim", "--workers", "1001", "--name", "never"]);
    expect(code).to.equal(2);
    expect(stderr).to.include("--workers takes a whole number from 1 to 1000, not 1001");
  });

  it("--zones past 26 exits 2", async function () {
    const { code, stderr } = await cli(["sim", "up", "--workers", "1000", "--zones", "27"]);
    expect(code).to.equal(2);
    expect(stderr).to.include("--zones takes a whole number from 1 to 26");
  });

  it("--pods-per-node past 100 exits 2", async function () {
    const { code, stderr } = await cli(["sim", "up", "--pods-per-node", "500"]);
    expect(code).to.equal(2);
    expect(stderr).to.include("--pods-per-node takes a whole number from 0 to 100");
  });

  it("rekindle run --workers with --provider kind exits 2", async function () {
    const { code, stderr } = await cli(["run", "--provider", "kind", "--workers", "300", "--no-html"]);
    expect(code).to.equal(2);
    expect(stderr).to.include("--workers size a sim cluster; --provider kind does not take them");
  });
});
