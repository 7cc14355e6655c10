// `rekindle reap`'s bad input: exit 2 naming what is wrong, before any cluster is reached.
import { expect } from "chai";
import { cli } from "../support/cli-capture.js";

describe("rekindle reap: bad input", () => {
  it("an argument it does not take exits 2 and names the flags it takes", async () => {
    const result = await cli(["reap", "worker-1"]);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.contain("rekindle reap takes no arguments, got worker-1");
    expect(result.stderr).to.contain("--run-id");
  });

  it("a kubeconfig that does not exist exits 2 naming it", async () => {
    const result = await cli(["reap", "--kubeconfig", "/nonexistent/kubeconfig"]);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.contain("/nonexistent/kubeconfig");
  });

  it("an empty --run-id exits 2", async () => {
    const result = await cli(["reap", "--run-id", ""]);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.contain("--run-id is empty");
  });

  it("answers --help with its usage", async () => {
    const result = await cli(["reap", "--help"]);
    expect(result.code).to.equal(0);
    expect(result.stdout).to.contain("rekindle reap [--kubeconfig K] [--context C] [--run-id R]");
  });
});
