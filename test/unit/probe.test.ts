// In-cluster probes of scenario-file workloads: the prober pod (pinned to the control plane, never
// pulled, its readiness probe the check itself), the check run for real with bash against a local
// HTTP server, and the milestones its Ready transitions become.
import { expect } from "chai";
import { execa } from "execa";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer } from "node:net";
import type { AddressInfo } from "node:net";
import {
  deriveNodeLossMilestones,
  recoveryMs,
  type Milestone,
  type WorkloadRef,
} from "../../lib/observe/milestones.js";
import { isRecordedMilestoneName } from "../../lib/observe/milestone-names.js";
import type { Transition } from "../../lib/observe/types.js";
import {
  CONTROL_PLANE_LABEL,
  PROBER_LABEL,
  probeCommand,
  PROBE_CHECK_TIMEOUT,
  proberPod,
  type ProbeCheck,
} from "../../lib/workloads/prober.js";
import { expectNoneOf } from "../support/assertions.js";

describe("the prober pod", function () {
  const pod = proberPod({
    workload: "web",
    namespace: "ns",
    image: "docker.io/rekindle/kind-userland:bookworm",
    host: "10.96.0.20",
    check: { kind: "http", port: 80, path: "/healthz" },
  });
  const container = pod.spec?.containers[0];

  it("runs on a control-plane node, so losing a worker never takes it, from an image it never pulls", function () {
    expect(pod.metadata?.name).to.equal("rekindle-probe-web");
    expect(pod.metadata?.labels).to.deep.equal({ [PROBER_LABEL]: "web" });
    expect(pod.spec?.nodeSelector).to.deep.equal({ [CONTROL_PLANE_LABEL]: "" });
    expect(pod.spec?.tolerations).to.deep.include({
      key: CONTROL_PLANE_LABEL,
      operator: "Exists",
      effect: "NoSchedule",
    });
    expect(container?.imagePullPolicy).to.equal("Never");
    expect(container?.command).to.deep.equal(["sleep", "infinity"]);
  });

  it("is Ready exactly while its check answers: once a second, one failure or success decides", function () {
    const probe = container?.readinessProbe;
    expect(probe?.exec?.command).to.deep.equal(probeCommand("http"));
    expect([
      probe?.periodSeconds,
      probe?.failureThreshold,
      probe?.successThreshold,
      probe?.timeoutSeconds,
    ]).to.deep.equal([1, 1, 1, 1]);
    // The target travels in the environment, never spliced into the script.
    expect(container?.env).to.deep.equal([
      { name: "PROBE_HOST", value: "10.96.0.20" },
      { name: "PROBE_PORT", value: "80" },
      { name: "PROBE_PATH", value: "/healthz" },
    ]);
    const tcp = proberPod({
      workload: "db",
      namespace: "ns",
      image: "i",
      host: "h",
      check: { kind: "tcp", port: 5432 },
    });
    expect(tcp.spec?.containers[0]?.env?.map((e) => e.name)).to.deep.equal(["PROBE_HOST", "PROBE_PORT"]);
  });
});

/**
 * Runs the prober's check locally, as the kubelet would in the prober container. The status-line
 * cases give it room (`timeoutSeconds`): a loaded machine can take longer than the real 0.8 s to
 * start bash, and what they judge is the answer, not the clock.
 */
async function check(probe: ProbeCheck, port: number, timeoutSeconds = "30"): Promise<number> {
  const [command, ...args] = probeCommand(probe.kind, timeoutSeconds);
  const result = await execa(command ?? "", args, {
    reject: false,
    env: {
      PROBE_HOST: "127.0.0.1",
      PROBE_PORT: String(port),
      ...(probe.kind === "http" ? { PROBE_PATH: probe.path } : {}),
    },
  });
  return result.exitCode ?? -1;
}

function listening(server: Server | ReturnType<typeof createTcpServer>): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      resolve((server.address() as AddressInfo).port);
    });
  });
}

describe("the probe's check (bash /dev/tcp), against a local server", function () {
  let server: Server;
  let port: number;
  const seen: string[] = [];

  before(async function () {
    server = createServer((request, response) => {
      seen.push(request.url ?? "");
      const status = { "/ok": 200, "/moved": 302, "/broken": 500 }[request.url ?? ""] ?? 404;
      response.writeHead(status).end("x");
    });
    port = await listening(server);
  });

  after(function () {
    server.close();
  });

  it("HTTP: answers for a 2xx or 3xx status line, not for 4xx or 5xx; the path is sent as given", async function () {
    expect(await check({ kind: "http", port, path: "/ok" }, port)).to.equal(0);
    expect(await check({ kind: "http", port, path: "/moved" }, port)).to.equal(0);
    expect(await check({ kind: "http", port, path: "/missing" }, port)).to.equal(1);
    expect(await check({ kind: "http", port, path: "/broken" }, port)).to.equal(1);
    expect(await check({ kind: "http", port, path: "/it's" }, port)).to.equal(1);
    expect(seen).to.include("/it's");
  });

  it("TCP: answers when the connection is accepted; a closed port does not", async function () {
    const tcp = createTcpServer((socket) => socket.end());
    const open = await listening(tcp);
    try {
      expect(await check({ kind: "tcp", port: open }, open)).to.equal(0);
    } finally {
      tcp.close();
    }
    expect(await check({ kind: "tcp", port: open }, open)).to.not.equal(0);
  });

  it("HTTP: a server that accepts but never answers fails by the check's own timeout", async function () {
    const silent = createTcpServer(() => undefined);
    const quiet = await listening(silent);
    try {
      // 124: coreutils timeout ended the check at PROBE_CHECK_TIMEOUT (a refusal or a bad status is 1).
      expect(await check({ kind: "http", port: quiet, path: "/" }, quiet, PROBE_CHECK_TIMEOUT)).to.equal(124);
    } finally {
      silent.close();
    }
  });
});

describe("the probe's milestones", function () {
  const T0 = 1_000_000;
  const web: WorkloadRef = { id: "web", namespace: "ns", matchLabels: {}, service: "web", probed: true };

  /** A transition of the prober of `id`, `atMs` after the fault. */
  const prober =
    (id: string) =>
    (atMs: number, name: Transition["name"]): Transition => ({
      name,
      atMs: T0 + atMs,
      subject: { kind: "Pod", name: `rekindle-probe-${id}`, namespace: "ns", uid: `probe-${id}` },
      node: "control-plane",
      detail: { app: "" },
      pod: { labels: { [PROBER_LABEL]: id }, claims: [] },
      source: "watch",
    });
  const p = prober("web");
  const derive = (transitions: Transition[], workloads: WorkloadRef[] = [web]): Milestone[] =>
    deriveNodeLossMilestones(transitions, { faultAtMs: T0, lostNode: "worker-1", workloads });
  const names = (ms: Milestone[]) => ms.filter((m) => m.name.startsWith("web:")).map((m) => [m.name, m.atMs]);

  it("probe-failing at its first not Ready after the fault, answering at its next Ready (not the control plane's node)", function () {
    const milestones = derive([
      p(-9000, "pod-ready"),
      p(1200, "pod-unready"),
      p(40_000, "pod-ready"),
      p(41_000, "pod-unready"),
    ]);
    expect(names(milestones)).to.deep.equal([
      ["web:probe-failing", 1200],
      ["web:answering", 40_000],
    ]);
    expect(milestones.find((m) => m.name === "web:answering")?.node).to.equal(undefined);
  });

  it("a probe not answering at the fault fails from the fault on; one that never fails has neither", function () {
    expect(
      names(derive([p(-9000, "pod-ready"), p(-100, "pod-unready"), p(5000, "pod-ready")])),
    ).to.deep.equal([
      ["web:probe-failing", 0],
      ["web:answering", 5000],
    ]);
    expect(names(derive([p(-9000, "pod-ready")]))).to.deep.equal([]);
  });

  it("only for a probed workload, from its own prober", function () {
    expect(
      names(derive([p(-9000, "pod-ready"), p(1200, "pod-unready")], [{ ...web, probed: false }])),
    ).to.deep.equal([]);
    const other = prober("api");
    expect(names(derive([other(-9000, "pod-ready"), other(1200, "pod-unready")]))).to.deep.equal([]);
  });

  it("a prober pod is never a pod of the workload it probes, even under a selector that matches every pod", function () {
    // matchLabels {} selects every pod of the namespace; the prober's Ready must not count as a replacement's.
    const milestones = derive([
      p(-9000, "pod-scheduled"),
      p(-9000, "pod-ready"),
      p(1200, "pod-unready"),
      p(5000, "pod-created"),
      p(6000, "pod-ready"),
    ]);
    expectNoneOf(
      milestones.map((m) => m.name),
      ["web:replacement-created", "web:recovered"],
      "the milestones",
    );
  });

  it("are names the recorder produces for a workload", function () {
    expect(isRecordedMilestoneName("web:probe-failing", ["web"])).to.equal(true);
    expect(isRecordedMilestoneName("web:answering", ["web"])).to.equal(true);
  });

  it("recovered means answering: the later of recovered, serving and answering; a probe that failed and never answered is not recovered", function () {
    const base = [
      { name: "web:recovered", atMs: 30_000 },
      { name: "web:serving", atMs: 31_000 },
    ];
    expect(
      recoveryMs(
        [...base, { name: "web:probe-failing", atMs: 1000 }, { name: "web:answering", atMs: 33_500 }],
        ["web"],
      ),
    ).to.equal(33_500);
    expect(recoveryMs([...base, { name: "web:probe-failing", atMs: 1000 }], ["web"])).to.equal(undefined);
    expect(recoveryMs(base, ["web"]), "a probe that never failed does not hold recovery back").to.equal(
      31_000,
    );
  });
});
