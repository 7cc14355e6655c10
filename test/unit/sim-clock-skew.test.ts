import { expect } from "chai";
import {
  admissionResponse,
  clockWebhookConfiguration,
  leasePatch,
  nodeStatusPatch,
  parseSkewPath,
  skewedRenewTime,
  skewPath,
  type ClockSkew,
} from "../../lib/cluster/sim/hostile/clock-skew.js";
import { formatMicroTime } from "../../lib/kube/micro-time.js";
import { validateClockSkew } from "../../lib/cluster/sim/hostile/clock-webhook.js";
import { RekindleError } from "../../lib/errors.js";

const BEHIND: ClockSkew = { offsetMs: -30_000, step: false };
const STEPPED: ClockSkew = { offsetMs: -30_000, step: true };

describe("sim clock skew (what the webhook writes)", function () {
  it("writes MicroTime with exactly six fractional digits, keeping kwok's microseconds", function () {
    expect(formatMicroTime(Date.parse("2026-01-02T03:04:05.120Z"), 7)).to.equal(
      "2026-01-02T03:04:05.120007Z",
    );
    expect(skewedRenewTime("2026-01-02T03:04:35.123456Z", undefined, STEPPED)).to.equal(
      "2026-01-02T03:04:05.123456Z",
    );
    // Fewer digits, or an offset zone, read the same.
    expect(skewedRenewTime("2026-01-02T04:04:35.5+01:00", undefined, STEPPED)).to.equal(
      "2026-01-02T03:04:05.500000Z",
    );
    expect(skewedRenewTime("2026-01-02T03:04:35Z", undefined, { offsetMs: 1_500, step: true })).to.equal(
      "2026-01-02T03:04:36.500000Z",
    );
    expect(skewedRenewTime("not a time", undefined, STEPPED)).to.equal(undefined);
  });

  it("a stepped clock moves renewTime back at once; a slewed one never moves it back", function () {
    const stored = "2026-01-02T03:04:33.000010Z"; // the last renewal, 2 s before, true clock
    const written = "2026-01-02T03:04:35.000020Z";
    expect(skewedRenewTime(written, stored, STEPPED)).to.equal("2026-01-02T03:04:05.000020Z");
    // Slewing: 1 ms past the stored renewTime, so the node lifecycle controller counts the renewal.
    expect(skewedRenewTime(written, stored, BEHIND)).to.equal("2026-01-02T03:04:33.001010Z");
    // Once the node's clock is behind by the whole offset, it is the shifted time again.
    expect(skewedRenewTime(written, "2026-01-02T03:04:03.000000Z", BEHIND)).to.equal(
      "2026-01-02T03:04:05.000020Z",
    );
    // A clock ahead moves forward at once either way.
    expect(skewedRenewTime(written, stored, { offsetMs: 30_000, step: false })).to.equal(
      "2026-01-02T03:05:05.000020Z",
    );
  });

  it("shifts a Lease renewal (and a new acquireTime), leaves other Lease writes alone", function () {
    const old = { spec: { renewTime: "2026-01-02T03:04:33.000000Z" } };
    expect(leasePatch({ spec: { renewTime: "2026-01-02T03:04:35.000000Z" } }, old, STEPPED)).to.deep.equal([
      { op: "replace", path: "/spec/renewTime", value: "2026-01-02T03:04:05.000000Z" },
    ]);
    // Not a renewal: someone else's write that kept renewTime (the holder cleared for a restart).
    expect(leasePatch(old, old, STEPPED)).to.deep.equal([]);
    // A Lease created by a fresh kwok.
    expect(
      leasePatch(
        { spec: { renewTime: "2026-01-02T03:04:35.000000Z", acquireTime: "2026-01-02T03:04:35.000000Z" } },
        undefined,
        BEHIND,
      ),
    ).to.deep.equal([
      { op: "replace", path: "/spec/renewTime", value: "2026-01-02T03:04:05.000000Z" },
      { op: "replace", path: "/spec/acquireTime", value: "2026-01-02T03:04:05.000000Z" },
    ]);
  });

  it("shifts only the condition times a node status write changed, as metav1.Time (seconds)", function () {
    const old = {
      status: {
        conditions: [
          {
            type: "Ready",
            lastHeartbeatTime: "2026-01-02T03:00:00Z",
            lastTransitionTime: "2026-01-02T02:00:00Z",
          },
        ],
      },
    };
    const written = {
      status: {
        conditions: [
          {
            type: "MemoryPressure",
            lastHeartbeatTime: "2026-01-02T03:04:35Z",
            lastTransitionTime: "2026-01-02T02:00:00Z",
          },
          {
            type: "Ready",
            lastHeartbeatTime: "2026-01-02T03:04:35Z",
            lastTransitionTime: "2026-01-02T02:00:00Z",
          },
        ],
      },
    };
    expect(nodeStatusPatch(written, old, STEPPED)).to.deep.equal([
      { op: "replace", path: "/status/conditions/0/lastHeartbeatTime", value: "2026-01-02T03:04:05Z" },
      // New condition: its transition time is this write's too.
      { op: "replace", path: "/status/conditions/0/lastTransitionTime", value: "2026-01-02T01:59:30Z" },
      { op: "replace", path: "/status/conditions/1/lastHeartbeatTime", value: "2026-01-02T03:04:05Z" },
    ]);
  });

  it("answers an AdmissionReview: always allowed, the patch base64 JSONPatch, none for other objects", function () {
    const lease = admissionResponse(
      {
        uid: "u1",
        kind: { group: "coordination.k8s.io", kind: "Lease" },
        object: { spec: { renewTime: "2026-01-02T03:04:35.000000Z" } },
        oldObject: { spec: { renewTime: "2026-01-02T03:04:33.000000Z" } },
      },
      STEPPED,
    );
    expect(lease.response).to.include({ uid: "u1", allowed: true, patchType: "JSONPatch" });
    expect(JSON.parse(Buffer.from(lease.response.patch ?? "", "base64").toString())).to.deep.equal([
      { op: "replace", path: "/spec/renewTime", value: "2026-01-02T03:04:05.000000Z" },
    ]);
    const node = admissionResponse({ uid: "u2", kind: { kind: "Node" }, object: {} }, STEPPED);
    expect(node.response).to.deep.equal({ uid: "u2", allowed: true });
  });

  it("carries the skew in the URL path (the apiserver allows no query) and reads it back", function () {
    for (const skew of [BEHIND, STEPPED, { offsetMs: 45_000, step: false }]) {
      expect(parseSkewPath(skewPath(skew))).to.deep.equal(skew);
    }
    expect(skewPath(BEHIND)).to.equal("/skew/-30000/slew");
    expect(parseSkewPath("/skew/abc/slew")).to.equal(undefined);
    expect(parseSkewPath("/healthz")).to.equal(undefined);
  });

  it("configures one webhook per skewed node, for its kwok's writes only, failing open", function () {
    const configuration = clockWebhookConfiguration(
      { "worker-2": STEPPED, "worker-1": BEHIND },
      { port: 4443, caBundle: "PEM", kwokUser: "rekindle-kwok" },
      { "rekindle.dev/run": "r1" },
    );
    expect(configuration.metadata?.labels).to.deep.equal({ "rekindle.dev/run": "r1" });
    const webhooks = configuration.webhooks ?? [];
    expect(webhooks.map((w) => w.name)).to.deep.equal([
      "worker-1.clock.sim.rekindle.dev",
      "worker-2.clock.sim.rekindle.dev",
    ]);
    const [first] = webhooks;
    expect(first?.clientConfig.url).to.equal("https://127.0.0.1:4443/skew/-30000/slew");
    expect(first?.clientConfig.caBundle).to.equal(Buffer.from("PEM").toString("base64"));
    expect(first?.failurePolicy).to.equal("Ignore");
    expect(first?.sideEffects).to.equal("None");
    expect(first?.rules?.map((r) => r.resources)).to.deep.equal([["leases"], ["nodes/status"]]);
    expect(first?.matchConditions?.map((c) => c.expression)).to.deep.equal([
      'object.metadata.name == "worker-1" && (request.resource.resource == "nodes" || request.namespace == "kube-node-lease")',
      'request.userInfo.username == "rekindle-kwok"',
    ]);
  });

  it("refuses offsets that are not whole milliseconds or beyond a day", function () {
    const check = (offsetMs: number) => () => {
      validateClockSkew({ offsetMs, step: false });
    };
    expect(check(0.5)).to.throw(RekindleError, "clock offset");
    expect(check(-90_000_000)).to.throw(RekindleError, "within a day");
    expect(check(-86_400_000)).to.not.throw();
  });
});
