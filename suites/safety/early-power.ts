// Safety of the early power read (lib/controller/early-power.ts): a silent node's power is read at
// its first missed renewal, and a node read off is fenced at once. The read is a driver call like
// any other: when it hangs, nothing may wait for it. The node is then fenced by the silence path,
// after unhealthyAfter, with its own reads, and exactly once.
import { detectionWindow, expectedControllerRecovery, nodeLossWorkloads } from "../../lib/scenario/common.js";
import { powerBackOn } from "../../lib/scenario/safety.js";
import { FENCE_STARTED_TWICE, safetyScenario } from "./define.js";
import { firstCallHangs, hangUntilReleased } from "./hangs.js";
import { openWithNodeLost } from "./shared.js";

const READ_HUNG = "early-power-read-hung";

export const earlyPowerReadHangs = safetyScenario({
  id: "safety/early-power-read-hangs",
  title:
    "the early power read of a stopped node hangs: nothing waits for it, the node is fenced after unhealthyAfter by the silence path, once",
  requires: ["lifecycle", "fencing"],
  powerOffs: 1,
  never: { [FENCE_STARTED_TWICE]: "one fence for one incident" },
  windows: (inputs) => [
    ...expectedControllerRecovery(inputs, { earlyReadFails: true }),
    {
      name: READ_HUNG,
      after: "fault-injected",
      ...detectionWindow(inputs, { poweredOff: true }),
      why: "the node's power is read at its first missed renewal (and this read hangs)",
    },
  ],
  workloads: nodeLossWorkloads,
  recoveryOf: ["statefulset", "statefulset-plain"],
  marks: [READ_HUNG],
  note: (inputs) =>
    `the driver's first power read hangs until the end; unhealthyAfter ${inputs.controller.unhealthyAfterMs / 1000}s`,
  async run(context) {
    const { inputs } = context;
    // The hang outlasts unhealthyAfter: no second early read may come before the silence path.
    const driverTimeoutMs = 4 * inputs.controller.unhealthyAfterMs + 20_000;
    const { released } = hangUntilReleased(context, "power read");
    const { node } = await openWithNodeLost(
      context,
      { count: 0 },
      {
        config: { driverTimeoutMs, passTimeoutMs: driverTimeoutMs + 30_000 },
        wrap: (driver) =>
          firstCallHangs(driver, "powerState", {
            released,
            onHang: () => {
              context.mark(READ_HUNG);
            },
          }),
      },
    );
    await context.awaitMilestone(READ_HUNG);
    await context.awaitMilestone("statefulset:recovered");
    await context.awaitMilestone("statefulset-plain:recovered");
    await powerBackOn(context, node);
  },
});
