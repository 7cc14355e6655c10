import { expect } from "chai";
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { decide, FENCE_STEPS } from "../../lib/controller/fence-state.js";
import { deployPath } from "../../lib/util/project-files.js";

interface CrdShape {
  spec: {
    versions: {
      schema: {
        openAPIV3Schema: { properties: { status: { properties: { step: { enum: string[] } } } } };
      };
    }[];
  };
}

describe("NodeFence steps", function () {
  it("the CRD's status.step enum lists exactly the steps the controller writes", function () {
    const crd = parse(readFileSync(deployPath("controller", "crd.yaml"), "utf8")) as CrdShape;
    for (const version of crd.spec.versions) {
      expect(version.schema.openAPIV3Schema.properties.status.properties.step.enum).to.deep.equal([
        ...FENCE_STEPS,
      ]);
    }
  });

  it("has no isolation step: no driver isolates, every fence is a power off", function () {
    expect(FENCE_STEPS).to.not.include("isolation");
    // A new fence starts at power-management and powers off; only a confirmed power off leads on.
    const options = {
      fenceRetries: 3,
      retryBackoffMs: 10_000,
      maxRetryBackoffMs: 300_000,
      recoveryTimeoutMs: 600_000,
      healthyBeforeUnfenceMs: 0,
      staleWaitMs: 0,
    };
    const observation = { health: "unhealthy", healthyForMs: 0, stalePods: 0, nowMs: 0 } as const;
    expect(decide({ step: "power-management", phase: "new", retries: 0 }, observation, options)).to.equal(
      "power-off",
    );
    expect(decide({ step: "power-management", phase: "done", retries: 0 }, observation, options)).to.equal(
      "taint",
    );
  });
});
