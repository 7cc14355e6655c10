import { expect } from "chai";
import { main } from "../../lib/cli/main.js";

async function captureStderr(run: () => Promise<number>): Promise<{ code: number; stderr: string }> {
  const original = process.stderr.write.bind(process.stderr);
  let stderr = "";
  process.stderr.write = (chunk: string | Uint8Array) => {
    stderr += chunk.toString();
    return true;
  };
  try {
    return { code: await run(), stderr };
  } finally {
    process.stderr.write = original;
  }
}

describe("CLI input errors", function () {
  it("an unknown command exits 2 naming the valid ones", async function () {
    const { code, stderr } = await captureStderr(() => main(["frobnicate"]));
    expect(code).to.equal(2);
    expect(stderr).to.include('unknown command "frobnicate"').and.include("sim");
  });

  it("an unknown profile exits 2 before anything starts", async function () {
    const { code, stderr } = await captureStderr(() =>
      main(["sim", "up", "--profile", "slow", "--name", "never-started"]),
    );
    expect(code).to.equal(2);
    expect(stderr).to.include('unknown profile "slow"; valid: default, fast');
  });

  it("a bad worker count exits 2", async function () {
    const { code, stderr } = await captureStderr(() => main(["sim", "up", "--workers", "three"]));
    expect(code).to.equal(2);
    expect(stderr).to.include("--workers takes a whole number");
  });

  it("an unknown option exits 2", async function () {
    const { code, stderr } = await captureStderr(() => main(["sim", "up", "--nodes", "3"]));
    expect(code).to.equal(2);
    expect(stderr).to.include("--nodes");
  });

  it("more zones than workers exits 2", async function () {
    const { code, stderr } = await captureStderr(() => main(["sim", "up", "--workers", "2", "--zones", "3"]));
    expect(code).to.equal(2);
    expect(stderr).to.include("zone count");
  });

  it("operating on a cluster that does not exist exits 1 and says how to start one", async function () {
    const { code, stderr } = await captureStderr(() =>
      main(["sim", "status", "--name", "no-such-cluster-here"]),
    );
    expect(code).to.equal(1);
    expect(stderr).to.include('no sim cluster "no-such-cluster-here"').and.include("rekindle sim up");
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
