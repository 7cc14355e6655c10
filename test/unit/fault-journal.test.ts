// The fault journal's record codec and ConfigMap store on a fake API, and the reaper's decisions
// (revert, leave to a live run, leave to another host's run until its deadline, report a failure).
import { expect } from "chai";
import { reapExitCode } from "../../lib/cli/reap-command.js";
import { RekindleError } from "../../lib/errors.js";
import type { FaultActuator } from "../../lib/fault/actuator.js";
import { ConfigMapJournal, type JournalApi } from "../../lib/fault/journal.js";
import { reapClean, reapFaults, reapLines } from "../../lib/fault/reaper.js";
import {
  decodeRecord,
  encodeRecord,
  JOURNAL_NAMESPACE,
  journalSelector,
  runIdLabel,
} from "../../lib/fault/record-codec.js";
import type { FaultRecord } from "../../lib/fault/types.js";
import { k8s } from "../../lib/kube/client.js";
import { rekindleThrow } from "../support/assertions.js";
import { MemoryJournal } from "../support/fake-fault.js";

function record(overrides: Partial<FaultRecord> = {}): FaultRecord {
  return {
    id: "fault-run-1-1-abcdef",
    runId: "run-1",
    action: { kind: "partition" },
    nodes: [
      { name: "w1", state: "applied", at: "2026-11-24T10:00:01.000Z" },
      { name: "w2", state: "applying", at: "2026-11-24T10:00:02.000Z" },
    ],
    appliedAt: "2026-11-24T10:00:00.000Z",
    deadline: "2026-11-24T11:00:00.000Z",
    locator: { provider: "kind", cluster: "rekindle", dockerHost: "unix:///run/engine.sock" },
    holder: { host: "elsewhere", pid: 4242 },
    ...overrides,
  };
}

function apiError(code: number): k8s.ApiException<string> {
  return new k8s.ApiException(code, `status ${code}`, "", {});
}

/** An API server's ConfigMaps and namespaces, in memory, with label selectors of the form a=b,c=d. */
class FakeApi implements JournalApi {
  readonly namespaces = new Set<string>();
  readonly maps = new Map<string, k8s.V1ConfigMap>();
  readonly calls: string[] = [];

  createNamespace(param: { body: k8s.V1Namespace }): Promise<unknown> {
    const name = param.body.metadata?.name ?? "";
    this.calls.push(`create namespace ${name}`);
    if (this.namespaces.has(name)) return Promise.reject(apiError(409));
    this.namespaces.add(name);
    return Promise.resolve(param.body);
  }
  createNamespacedConfigMap(param: { namespace: string; body: k8s.V1ConfigMap }): Promise<unknown> {
    const name = param.body.metadata?.name ?? "";
    this.calls.push(`create ${name}`);
    if (!this.namespaces.has(param.namespace)) return Promise.reject(apiError(404));
    if (this.maps.has(name)) return Promise.reject(apiError(409));
    this.maps.set(name, structuredClone(param.body));
    return Promise.resolve(param.body);
  }
  replaceNamespacedConfigMap(param: { name: string; body: k8s.V1ConfigMap }): Promise<unknown> {
    this.calls.push(`replace ${param.name}`);
    this.maps.set(param.name, structuredClone(param.body));
    return Promise.resolve(param.body);
  }
  deleteNamespacedConfigMap(param: { name: string }): Promise<unknown> {
    this.calls.push(`delete ${param.name}`);
    if (!this.maps.delete(param.name)) return Promise.reject(apiError(404));
    return Promise.resolve({});
  }
  listNamespacedConfigMap(param: { namespace: string; labelSelector: string }): Promise<k8s.V1ConfigMapList> {
    if (!this.namespaces.has(param.namespace)) return Promise.reject(apiError(404));
    const wanted = param.labelSelector.split(",").map((pair) => pair.split("="));
    const items = [...this.maps.values()].filter((m) =>
      wanted.every(([key = "", value]) => m.metadata?.labels?.[key] === value),
    );
    return Promise.resolve({ items: structuredClone(items) });
  }
}

describe("fault journal: record codec", () => {
  it("encodes a record as a labelled ConfigMap a person can read, and decodes it back", () => {
    const map = encodeRecord(record());
    expect(map.metadata?.namespace).to.equal(JOURNAL_NAMESPACE);
    expect(map.metadata?.labels).to.deep.equal({
      "rekindle.dev/journal": "fault",
      "rekindle.dev/run-id": "run-1",
      "rekindle.dev/run": "run-1",
    });
    expect(map.data?.["kind"]).to.equal("partition");
    expect(JSON.parse(map.data?.["revert"] ?? "")).to.deep.equal(record().locator);
    expect(decodeRecord(map)).to.deep.equal(record());
    const pressure = record({
      action: { kind: "pressure", pressure: "disk" },
      locator: { provider: "sim", root: "/r" },
    });
    expect(decodeRecord(encodeRecord(pressure))).to.deep.equal(pressure);
  });

  it("refuses a record with a bad field, naming the ConfigMap, the field and what is valid", () => {
    const map = encodeRecord(record());
    const bad = (data: Record<string, string>) =>
      rekindleThrow(() => decodeRecord({ ...map, data: { ...map.data, ...data } }));
    const kind = bad({ kind: "explode" });
    expect(kind.code).to.equal("INVALID_INPUT");
    expect(kind.message).to.contain("fault record fault-run-1-1-abcdef: kind");
    expect(kind.message).to.contain("valid: stop, graceful-shutdown, partition, pressure");
    expect(bad({ nodes: "[{}]" }).message).to.contain("nodes");
    expect(bad({ revert: '{"provider":"ec2"}' }).message).to.contain("revert");
    expect(bad({ deadline: "soon" }).message).to.contain("deadline");
    expect(bad({ format: "2" }).message).to.contain("this rekindle reads 1");
  });

  it("makes a label value of any run id, and selects one run's records or all", () => {
    expect(runIdLabel("a run/with spaces!")).to.equal("a-run-with-spaces");
    expect(runIdLabel("x".repeat(80))).to.have.length(63);
    expect(journalSelector()).to.equal("rekindle.dev/journal=fault");
    expect(journalSelector("r1")).to.equal("rekindle.dev/journal=fault,rekindle.dev/run-id=r1");
  });
});

describe("fault journal: ConfigMaps", () => {
  it("creates its namespace once, then the record; later writes replace it; remove is idempotent", async () => {
    const api = new FakeApi();
    const journal = new ConfigMapJournal(api);
    await journal.write(record());
    await journal.write(record({ nodes: [] }));
    expect(api.calls).to.deep.equal([
      `create namespace ${JOURNAL_NAMESPACE}`,
      "create fault-run-1-1-abcdef",
      "create fault-run-1-1-abcdef",
      "replace fault-run-1-1-abcdef",
    ]);
    expect((await journal.list()).records).to.deep.equal([record({ nodes: [] })]);
    await journal.remove("fault-run-1-1-abcdef");
    await journal.remove("fault-run-1-1-abcdef");
    expect((await journal.list()).records).to.deep.equal([]);
  });

  it("lists nothing where nothing was ever journalled, one run's records, and the unreadable apart", async () => {
    const api = new FakeApi();
    const journal = new ConfigMapJournal(api);
    expect(await journal.list()).to.deep.equal({ records: [], unreadable: [] });
    await journal.write(record());
    await journal.write(record({ id: "fault-run-2-1-aaaaaa", runId: "run-2" }));
    const broken = encodeRecord(record({ id: "fault-broken" }));
    api.maps.set("fault-broken", { ...broken, data: { ...broken.data, kind: "?" } });
    expect((await journal.list("run-2")).records.map((r) => r.id)).to.deep.equal(["fault-run-2-1-aaaaaa"]);
    const all = await journal.list();
    expect(all.records).to.have.length(2);
    expect(all.unreadable.map((u) => u.name)).to.deep.equal(["fault-broken"]);
  });
});

describe("fault journal: reaping", () => {
  function fakeReconnect(log: string[], failOn = new Set<string>()) {
    return (): Promise<FaultActuator> =>
      Promise.resolve({
        apply: () => Promise.reject(new Error("not here")),
        revert: (node: string) => {
          log.push(`revert ${node}`);
          return failOn.has(node)
            ? Promise.reject(new RekindleError("UNREACHABLE", `${node} does not answer`))
            : Promise.resolve();
        },
      });
  }
  const now = () => Date.parse("2026-11-24T10:30:00Z");

  it("reverts a dead run's fault newest node first (the half-applied one too) and removes its record", async () => {
    const journal = new MemoryJournal();
    await journal.write(
      record({ holder: { host: "elsewhere", pid: 1 }, deadline: "2026-11-24T10:10:00.000Z" }),
    );
    const log: string[] = [];
    const report = await reapFaults({
      journal,
      reconnect: fakeReconnect(log),
      holderAlive: () => false,
      now,
    });
    expect(log).to.deep.equal(["revert w2", "revert w1"]);
    expect(report.entries.map((e) => e.outcome)).to.deep.equal(["reverted"]);
    expect(journal.records.size).to.equal(0);
    expect(reapClean(report)).to.equal(true);
    expect(reapExitCode(report)).to.equal(0);
    expect(reapLines(report)[1]).to.match(/^ {2}reverted partition of w1, w2 \(run run-1/);
  });

  it("leaves a live run's fault to it, and another host's until its deadline unless its run is named", async () => {
    const journal = new MemoryJournal();
    await journal.write(record({ id: "live", holder: { host: "here", pid: 7 } }));
    await journal.write(record({ id: "held", runId: "run-9", holder: { host: "far", pid: 8 } }));
    const log: string[] = [];
    const alive = (h: { pid: number }) => h.pid === 7;
    const report = await reapFaults({ journal, reconnect: fakeReconnect(log), holderAlive: alive, now });
    expect(report.entries.map((e) => `${e.record.id}:${e.outcome}`)).to.deep.equal([
      "live:live",
      "held:held",
    ]);
    expect(report.entries[1]?.reason).to.contain("--run-id run-9");
    expect(log).to.deep.equal([]);
    expect(journal.records.size).to.equal(2);
    expect(reapExitCode(report)).to.equal(1);
    const named = await reapFaults({
      journal,
      runId: "run-9",
      reconnect: fakeReconnect(log),
      holderAlive: alive,
      now,
    });
    expect(named.entries.map((e) => e.outcome)).to.deep.equal(["reverted"]);
    expect([...journal.records.keys()]).to.deep.equal(["live"]);
  });

  it("reports a revert that fails, keeps the record with what was reverted, and says so in the exit code", async () => {
    const journal = new MemoryJournal();
    await journal.write(record());
    const log: string[] = [];
    const report = await reapFaults({
      journal,
      reconnect: fakeReconnect(log, new Set(["w1"])),
      holderAlive: () => false,
      runId: "run-1",
      now,
    });
    expect(report.entries[0]?.outcome).to.equal("failed");
    expect(report.entries[0]?.reason).to.contain("w1 does not answer");
    expect(journal.records.get(record().id)?.nodes.map((n) => `${n.name}:${n.state}`)).to.deep.equal([
      "w1:applied",
      "w2:reverted",
    ]);
    expect(reapExitCode(report)).to.equal(3);
    expect(reapLines(report).join("\n")).to.contain("FAILED to revert");
  });

  it("says so in one line when the journal is empty", async () => {
    const report = await reapFaults({ journal: new MemoryJournal() });
    expect(reapLines(report)).to.deep.equal(["fault journal: nothing left by an earlier run"]);
    expect(reapExitCode(report)).to.equal(0);
  });
});
