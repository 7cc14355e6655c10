// Controller failover: two replicas with leader election; the leader dies after powering the node
// off and before tainting it. The standby must take the Lease, pick the NodeFence up where it
// stands, and finish without fencing a second time.
import { OUT_OF_SERVICE_MILESTONE } from "../lib/expect/model.js";
import { pollUntil } from "../lib/util/time.js";
import { defineScenario } from "../lib/scenario/harness.js";
import { fenceStartedTwice, scenarioLeaderElection } from "../lib/scenario/safety.js";
import {
  deployWebAndDb,
  detectionWindow,
  never,
  nodeLossWorkloads,
  stopNodeAbruptly,
} from "../lib/scenario/common.js";

export const leaderKilledMidFence = defineScenario({
  id: "controller-failover/leader-killed-mid-fence",
  title: "the leader dies between power-off and taint: the standby takes over and finishes, no second fence",
  requires: ["lifecycle"],
  usesController: true,
  expected: (inputs) => {
    const c = inputs.controller;
    const lease = inputs.profile.failoverLeaseMs;
    const detect = detectionWindow(inputs, { poweredOff: true });
    return [
      {
        name: "fence:power-management:done",
        after: "fault-injected",
        minMs: detect.minMs,
        maxMs: detect.maxMs + 2 * c.checkIntervalMs,
        why: "the leader detects the loss and confirms the power-off",
      },
      inputs.within({
        name: OUT_OF_SERVICE_MILESTONE,
        after: "leader-killed",
        minMs: lease - c.checkIntervalMs,
        maxMs: lease + 3 * c.checkIntervalMs,
        why: `the standby takes the ${lease / 1000}s leader Lease once it expires, and resumes at the taint step`,
      }),
      inputs.within({
        name: "statefulset:recovered",
        after: OUT_OF_SERVICE_MILESTONE,
        minMs: 0,
        maxMs:
          c.detachGraceMs +
          3 * c.checkIntervalMs +
          inputs.latencies.attachMs +
          inputs.latencies.podStartMs +
          5_000,
        why: "force delete, volume detach (after detachGrace at worst), attach elsewhere, start",
      }),
      never("fence-started-twice", "the standby resumes the NodeFence instead of starting a new fence"),
    ];
  },
  workloads: nodeLossWorkloads,
  async run(context) {
    const { steps } = context;
    const { statefulSetNode: node } = await deployWebAndDb(context);
    // Renewed (and watched for expiry) every check interval: the takeover window below assumes it.
    const { elector, holder } = await scenarioLeaderElection(context);
    // The seam: replica-a stops acting right before the taint, as if it crashed there.
    const leader = await context.startController({
      config: { identity: "replica-a" },
      haltBefore: "taint",
      leader: elector("replica-a"),
    });
    await steps.step("let replica-a take the Lease", () =>
      pollUntil(async () => ((await holder()) === "replica-a" ? true : undefined), {
        what: "replica-a to hold the leader Lease",
        timeoutMs: 10_000,
        intervalMs: 200,
      }),
    );
    await context.startController({ config: { identity: "replica-b" }, leader: elector("replica-b") });
    await stopNodeAbruptly(context, node);
    await context.awaitMilestone("fence:power-management:done");
    await steps.step("kill the leader (replica-a) without releasing its Lease", async () => {
      await leader.stop();
      context.mark("leader-killed");
    });
    await context.awaitMilestone(OUT_OF_SERVICE_MILESTONE);
    await context.awaitMilestone("statefulset:recovered");
    await context.awaitMilestone("deployment:recovered");
  },
  ownMilestones: ["leader-killed", "fence-started-twice"],
  derive: (transitions, { faultAtMs }) => fenceStartedTwice(transitions, faultAtMs),
});

/** The family's scenarios, in the order `rekindle run` runs them. */
export const scenarios = [leaderKilledMidFence];
