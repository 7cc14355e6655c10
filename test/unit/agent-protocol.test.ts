// rekindle's node agent: its request codec (a ConfigMap per node and action) and the host scripts'
// shape (syntax checked by sh -n; each revert undoes what its apply did, and is idempotent).
import { execFileSync } from "node:child_process";
import { expect } from "chai";
import {
  AGENT_ACTIONS,
  decodeRequest,
  decodeStatus,
  encodeRequest,
  encodeStatus,
  REQUEST_LABEL,
  requestName,
  type AgentRequest,
} from "../../lib/agent/protocol.js";
import { applyScript, armBackstopScript, PARTITION_CHAIN, revertScript } from "../../lib/agent/node-ops.js";
import { rekindleThrow } from "../support/assertions.js";

const request: AgentRequest = {
  name: requestName("worker-1", "partition"),
  node: "worker-1",
  action: "partition",
  desired: "applied",
  deadline: "2026-11-24T11:00:00.000Z",
  id: "abc123",
};

describe("agent request codec", function () {
  it("round-trips a request through its ConfigMap, labelled for the agent's list", function () {
    const configMap = encodeRequest(request, "agents");
    expect(configMap.metadata?.namespace).to.equal("agents");
    expect(configMap.metadata?.labels?.[REQUEST_LABEL]).to.equal("true");
    expect(decodeRequest(configMap)).to.deep.equal(request);
  });

  it("names one request per node and action, DNS-1123", function () {
    expect(requestName("Worker-1", "pressure-disk")).to.equal("pressure-disk.worker-1");
    expect(requestName("a".repeat(300), "stop")).to.have.length(253);
  });

  it("refuses a request with a bad field, naming the ConfigMap, the field and what is valid", function () {
    const bad = (data: Record<string, string>) => () =>
      decodeRequest({ metadata: { name: "stop.w" }, data: { ...encodeRequest(request).data, ...data } });
    expect(rekindleThrow(bad({ action: "reboot" })).message).to.match(
      /stop\.w: action is "reboot"; valid: stop, partition, pressure-memory, pressure-disk/,
    );
    expect(rekindleThrow(bad({ desired: "maybe" })).message).to.match(/desired/);
    expect(rekindleThrow(bad({ deadline: "soon" })).message).to.match(/deadline is "soon"/);
    expect(rekindleThrow(bad({ id: "" })).message).to.match(/id/);
  });

  it("reads the agent's answer only once it gave one, with the request id it answers", function () {
    const configMap = encodeRequest(request);
    expect(decodeStatus(configMap)).to.equal(undefined);
    const status = {
      state: "applied",
      message: "ok",
      at: "2026-11-24T10:00:00.000Z",
      answers: "abc123",
    } as const;
    configMap.data = { ...configMap.data, ...encodeStatus(status) };
    expect(decodeStatus(configMap)).to.deep.equal(status);
    expect(decodeRequest(configMap)).to.deep.equal(request);
  });
});

describe("agent host scripts", function () {
  for (const action of AGENT_ACTIONS) {
    it(`${action}: apply and revert are valid sh`, function () {
      for (const script of [
        applyScript(action, ["10.0.0.1:6443"]),
        revertScript(action),
        armBackstopScript(action, 30),
      ])
        execFileSync("sh", ["-n", "-c", script]);
    });
  }

  it("partition drops only TCP to the API server's addresses from the host's OUTPUT chain; heal removes the chain", function () {
    const apply = applyScript("partition", ["10.0.0.1:6443"]);
    expect(apply).to.include('t="10.0.0.1:6443"');
    expect(apply).to.include(`iptables -w -I OUTPUT 1 -j $C`);
    expect(apply).to.match(/-p tcp -d .* --dport .* -j DROP/);
    expect(apply).to.not.match(/FORWARD|INPUT/);
    expect(revertScript("partition")).to.include(`C=${PARTITION_CHAIN}`).and.include("iptables -w -X $C");
  });

  it("arms a systemd timer at the deadline that runs the revert script, whole seconds, at least 1", function () {
    expect(armBackstopScript("stop", 12.2)).to.match(
      /systemd-run --unit rekindle-agent-revert-stop --on-active=13s .* \/bin\/sh \/var\/lib\/rekindle-agent\/revert-stop\.sh/,
    );
    expect(armBackstopScript("stop", -4)).to.include("--on-active=1s");
  });
});
