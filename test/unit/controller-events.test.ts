import { expect } from "chai";
import { describeHeld } from "../../lib/controller/cleanup.js";
import { EVENT_REASONS, EVENT_RETRIES, recordNodeEvent } from "../../lib/controller/events.js";
import { RekindleError } from "../../lib/errors.js";
import { withControllerTail } from "../../lib/scenario/controller-tail.js";
import { LineTail } from "../../lib/util/line-tail.js";
import { startFakeApiServer, status, type FakeApiServer } from "../support/fake-apiserver.js";

const EVENTS = "POST /api/v1/namespaces/default/events";

describe("the controller's node events", function () {
  let api: FakeApiServer | undefined;
  afterEach(async function () {
    await api?.close();
    api = undefined;
  });

  it("are tried again when the API server fails for a moment (5xx)", async function () {
    let calls = 0;
    api = await startFakeApiServer({
      [EVENTS]: () => {
        calls += 1;
        return calls < 3
          ? status(503, "ServiceUnavailable", "etcd leader changed")
          : { status: 201, body: {} };
      },
    });
    await recordNodeEvent(api.kc, "worker", EVENT_REASONS.nothingToRelease, "nothing held");
    expect(calls).to.equal(3);
  });

  it("count a 409 on a retry as recorded: the earlier try's response was lost", async function () {
    let calls = 0;
    api = await startFakeApiServer({
      [EVENTS]: () => {
        calls += 1;
        return calls === 1
          ? status(500, "InternalError", "timeout")
          : status(409, "AlreadyExists", "events exists");
      },
    });
    await recordNodeEvent(api.kc, "worker", EVENT_REASONS.nothingToRelease, "nothing held");
    expect(calls).to.equal(2);
  });

  it("give up at once on a refusal (403), and after the retries on a lasting outage", async function () {
    let refused = 0;
    api = await startFakeApiServer({
      [EVENTS]: () => {
        refused += 1;
        return status(403, "Forbidden", "cannot create events");
      },
    });
    const error = await recordNodeEvent(api.kc, "worker", EVENT_REASONS.fenceStarted, "x").catch(
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(Error);
    expect(refused).to.equal(1);
    await api.close();

    let failing = 0;
    api = await startFakeApiServer({
      [EVENTS]: () => {
        failing += 1;
        return status(503, "ServiceUnavailable", "down");
      },
    });
    const lasting = await recordNodeEvent(api.kc, "worker", EVENT_REASONS.fenceStarted, "x").catch(
      (e: unknown) => e,
    );
    expect(lasting).to.be.instanceOf(Error);
    expect(failing).to.equal(EVENT_RETRIES + 1);
  });
});

describe("what a lost node holds, in the controller's log", function () {
  it("names the pods and VolumeAttachments, at most 5 of each", function () {
    expect(describeHeld({ pods: [], volumeAttachments: [] })).to.equal("nothing");
    expect(describeHeld({ pods: ["ns/a"], volumeAttachments: ["csi-1", "csi-2"] })).to.equal(
      "1 pod (ns/a) and 2 VolumeAttachments (csi-1, csi-2)",
    );
    const many = ["a", "b", "c", "d", "e", "f", "g"].map((n) => `ns/${n}`);
    expect(describeHeld({ pods: many, volumeAttachments: [] })).to.equal(
      "7 pods (ns/a, ns/b, ns/c, ns/d, ns/e, +2 more)",
    );
  });
});

describe("a milestone that never came", function () {
  it("fails with the controller's last lines when it timed out, and leaves other errors alone", function () {
    const tail = new LineTail(2);
    for (const line of ["one", "two", "three"]) tail.push(line);
    expect(tail.lines()).to.deep.equal(["two", "three"]);

    const timeout = new RekindleError("TIMEOUT", "timed out after 10 ms waiting for milestone event:X");
    const withTail = withControllerTail(timeout, tail.lines());
    expect(withTail).to.be.instanceOf(RekindleError);
    expect((withTail as RekindleError).message).to.match(
      /event:X; the recovery controller's last lines:\n {2}two\n {2}three$/,
    );
    expect((withTail as RekindleError).code).to.equal("TIMEOUT");

    const other = new RekindleError("CONFLICT", "namespace taken");
    expect(withControllerTail(other, tail.lines())).to.equal(other);
    expect(withControllerTail(timeout, [])).to.equal(timeout);
  });
});
