import { expect } from "chai";
import { volumeWarningLine } from "../../lib/observe/volume-warnings.js";
import type { Transition } from "../../lib/observe/types.js";

const event = (detail: Record<string, string>): Transition => ({
  name: "event",
  atMs: 1,
  subject: { kind: "Event", name: "e", namespace: "ns" },
  source: "watch",
  detail,
});

describe("volume warnings in the run's log", function () {
  it("names the reason, the pod and the kubelet's message of a FailedMount", function () {
    const line = volumeWarningLine(
      event({
        reason: "FailedMount",
        type: "Warning",
        involvedKind: "Pod",
        involvedNamespace: "ns",
        involvedName: "db-0",
        message: "Unable to attach or mount volumes: failed to process volumes=[data]: error processing PVC",
      }),
    );
    expect(line).to.equal(
      "FailedMount pod ns/db-0: Unable to attach or mount volumes: failed to process volumes=[data]: error processing PVC",
    );
  });

  it("marks the Node authorizer race as transient, with the kubelet's backoff", function () {
    const line = volumeWarningLine(
      event({
        reason: "FailedMount",
        involvedKind: "Pod",
        involvedNamespace: "ns",
        involvedName: "db-0",
        message:
          "error processing PVC ns/data-db-0: failed to fetch PVC from API server: forbidden: no relationship found between node 'w2' and this object",
      }),
    );
    expect(line).to.match(
      /\[transient: the Node authorizer had not yet linked the pod to its node .*10–15 s pod-worker backoff\]$/,
    );
  });

  it("says nothing of other events or other transitions", function () {
    expect(
      volumeWarningLine(event({ reason: "Scheduled", involvedKind: "Pod", involvedName: "db-0" })),
    ).to.equal(undefined);
    expect(volumeWarningLine({ ...event({ reason: "FailedMount" }), name: "pod-ready" })).to.equal(undefined);
  });
});
