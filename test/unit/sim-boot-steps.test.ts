import { expect } from "chai";
import { runBootSteps, type BootStep } from "../../lib/cluster/sim/boot/steps.js";
import { SIM_BOOT_STEPS } from "../../lib/cluster/sim/boot/boot.js";
import { RekindleError } from "../../lib/errors.js";
import type { Progress } from "../../lib/util/progress.js";

function recordingProgress(lines: string[]): Progress {
  return {
    info(message) {
      lines.push(message);
    },
    phase(name) {
      return {
        update(message) {
          lines.push(`${name}: ${message}`);
        },
        end(result) {
          lines.push(`${name}: ${result ?? "done"}`);
          return 0;
        },
      };
    },
  };
}

describe("sim boot steps", () => {
  it("runs the steps in order, one numbered progress phase each with its result", async () => {
    const ran: string[] = [];
    const lines: string[] = [];
    const steps: BootStep<string[]>[] = ["first", "second"].map((name) => ({
      name,
      run(log) {
        log.push(name);
        return Promise.resolve(`${name} done`);
      },
    }));
    await runBootSteps(steps, ran, recordingProgress(lines));
    expect(ran).to.deep.equal(["first", "second"]);
    expect(lines).to.deep.equal(["[1/2] first: first done", "[2/2] second: second done"]);
  });

  it("stops at a failing step and names it, keeping the error's code and details", async () => {
    const lines: string[] = [];
    let after = false;
    const steps: BootStep<undefined>[] = [
      {
        name: "start etcd",
        run() {
          return Promise.reject(
            new RekindleError("PROCESS_EXITED", "etcd exited during startup", {
              details: { log: "etcd.log" },
            }),
          );
        },
      },
      {
        name: "never",
        run() {
          after = true;
          return Promise.resolve("");
        },
      },
    ];
    const error = await runBootSteps(steps, undefined, recordingProgress(lines)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(after).to.equal(false);
    expect(error).to.be.instanceOf(RekindleError);
    const rekindle = error as RekindleError;
    expect(rekindle.code).to.equal("PROCESS_EXITED");
    expect(rekindle.message).to.equal('sim boot step "start etcd" failed: etcd exited during startup');
    expect(rekindle.details).to.include({ step: "start etcd", log: "etcd.log" });
    expect(lines).to.deep.equal(["[1/2] start etcd: failed"]);
  });

  it("names a failing step for errors that are not RekindleErrors too", async () => {
    const steps: BootStep<undefined>[] = [
      { name: "register worker nodes", run: () => Promise.reject(new Error("boom")) },
    ];
    const error = await runBootSteps(steps, undefined, recordingProgress([])).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as RekindleError).message).to.equal('sim boot step "register worker nodes" failed: boom');
    expect((error as RekindleError).code).to.equal("BOOT_FAILED");
  });

  it("boots the control plane from etcd up before any worker", () => {
    const names = SIM_BOOT_STEPS.map((s) => s.name);
    expect(names.indexOf("start etcd")).to.be.lessThan(names.indexOf("start kube-apiserver"));
    expect(names.indexOf("start kube-apiserver")).to.be.lessThan(names.indexOf("register worker nodes"));
    expect(names.indexOf("apply the node DaemonSets (kube-system)")).to.be.lessThan(
      names.indexOf("register worker nodes"),
    );
    // Up means what a real cluster means: Ready workers, each running its node agents.
    // Then the filler pods (none unless asked for), which need both.
    expect(names.slice(-3)).to.deep.equal([
      "wait for nodes Ready and the default ServiceAccount",
      "wait for the node DaemonSets on every worker",
      "create the filler pods on the fleet workers",
    ]);
  });
});
