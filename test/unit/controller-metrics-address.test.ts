// Where the controller's metrics listen: --metrics-bind-address HOST:PORT (checked, exit 2 with
// the valid forms), --metrics-port on the default host, loopback out of a cluster and every
// interface in a pod; and `rekindle controller` serving prom-client's metrics there.
import { expect } from "chai";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { controllerCommand } from "../../lib/cli/controller-command.js";
import { controllerSettings, parseControllerFlags } from "../../lib/controller/flags.js";
import { formatAddress, metricsAddress, parseBindAddress } from "../../lib/controller/metrics-address.js";
import { METRICS } from "../../lib/controller/metrics.js";
import { RekindleError } from "../../lib/errors.js";
import { httpGet } from "../../lib/util/http.js";
import { freeLoopbackPorts } from "../../lib/util/ports.js";
import { pollUntil } from "../../lib/util/time.js";
import { captureStderr, listeningOn } from "../support/assertions.js";
import { cli } from "../support/cli-capture.js";
import { list, startFakeApiServer, status } from "../support/fake-apiserver.js";

describe("controller metrics address", function () {
  const settings = (inCluster: boolean, ...args: string[]) =>
    controllerSettings(parseControllerFlags(args), { inCluster }).metrics;

  it("defaults to loopback out of a cluster and every interface in a pod, port 9464", function () {
    expect(settings(false)).to.deep.equal({ host: "127.0.0.1", port: 9464 });
    expect(settings(true)).to.deep.equal({ host: "0.0.0.0", port: 9464 });
    expect(controllerSettings(parseControllerFlags([])).metrics.host).to.equal("127.0.0.1");
  });

  it("keeps --metrics-port: the default host, another port", function () {
    expect(settings(false, "--metrics-port", "9000")).to.deep.equal({ host: "127.0.0.1", port: 9000 });
    expect(settings(true, "--metrics-port", "0")).to.deep.equal({ host: "0.0.0.0", port: 0 });
    expect(controllerSettings(parseControllerFlags(["--metrics-port", "9000"])).metricsPort).to.equal(9000);
  });

  it("takes HOST:PORT for IPv4, host names and bracketed IPv6, in a pod too", function () {
    expect(settings(true, "--metrics-bind-address", "127.0.0.1:8080")).to.deep.equal({
      host: "127.0.0.1",
      port: 8080,
    });
    expect(parseBindAddress("0.0.0.0:0")).to.deep.equal({ host: "0.0.0.0", port: 0 });
    expect(parseBindAddress("localhost:9464")).to.deep.equal({ host: "localhost", port: 9464 });
    expect(parseBindAddress("[::1]:9464")).to.deep.equal({ host: "::1", port: 9464 });
    expect(formatAddress({ host: "::1", port: 9464 })).to.equal("[::1]:9464");
    expect(formatAddress({ host: "0.0.0.0", port: 1 })).to.equal("0.0.0.0:1");
  });

  it("refuses what is not HOST:PORT, naming the valid forms", function () {
    for (const bad of [
      "9464",
      "127.0.0.1",
      "::1:9464",
      "[127.0.0.1]:9464",
      "host:port",
      "a b:1",
      "1.2.3.4:70000",
    ]) {
      expect(() => parseBindAddress(bad), bad)
        .to.throw(RekindleError, `unknown --metrics-bind-address ${JSON.stringify(bad)}`)
        .with.property("code", "INVALID_INPUT");
    }
    expect(() => parseBindAddress(":9464")).to.throw(RekindleError, "write 0.0.0.0:9464");
    expect(() => parseBindAddress("1.2.3.4:70000")).to.throw(RekindleError, "a TCP port from 0 to 65535");
  });

  it("refuses both flags at once", function () {
    expect(() =>
      metricsAddress({ "metrics-bind-address": "127.0.0.1:1", "metrics-port": "2" }, false),
    ).to.throw(RekindleError, "--metrics-bind-address and --metrics-port both given");
  });

  it("is bad input for the CLI: exit 2, the flag and the valid forms on stderr", async function () {
    this.timeout(60_000);
    const { code, stderr } = await cli(["controller", "--metrics-bind-address", ":9464"]);
    expect(code).to.equal(2);
    expect(stderr).to.include("--metrics-bind-address").and.include("0.0.0.0:9464");
  });
});

describe("rekindle controller on --metrics-bind-address", function () {
  this.timeout(20_000);

  it("serves prom-client's metrics there, process metrics included, and says where", async function () {
    const dir = mkdtempSync(join(tmpdir(), "rekindle-metrics-address-"));
    const fenceYaml = join(dir, "fence.yaml");
    writeFileSync(fenceYaml, "templates:\n  hook: { driver: manual }\ndefaultTemplate: hook\n");
    const api = await startFakeApiServer({
      "GET /apis/rekindle.dev/v1alpha1/nodefences": () => list("NodeFenceList", []),
      "GET /api/v1/nodes": () => list("NodeList", []),
      "GET /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases": () => list("LeaseList", []),
      "GET /api/v1/namespaces/rekindle-system/configmaps/rekindle-controller": () =>
        status(404, "NotFound", "not found"),
    });
    const [port = 0] = await freeLoopbackPorts(1);
    const stop = new AbortController();
    const running = captureStderr(() =>
      controllerCommand(
        [
          "--kubeconfig",
          api.kubeconfigPath,
          "--fence-config",
          fenceYaml,
          "--metrics-bind-address",
          `127.0.0.1:${port}`,
          "--check-interval",
          "100ms",
          "--unhealthy-after",
          "1s",
        ],
        stop.signal,
      ),
    );
    try {
      const metrics = await pollUntil(
        async () => {
          const answer = await httpGet(`http://127.0.0.1:${port}/metrics`).catch(() => undefined);
          return answer?.status === 200 ? answer.body : undefined;
        },
        { what: "/metrics 200", timeoutMs: 10_000, intervalMs: 50 },
      );
      expect(metrics)
        .to.include(`${METRICS.leader} 1`)
        .and.include(`${METRICS.buildInfo}{`)
        .and.include("nodejs_eventloop_lag_seconds")
        .and.include(`${METRICS.unhealthy} 0`);
    } finally {
      stop.abort();
      const { value, stderr } = await running;
      expect(value, stderr).to.equal(0);
      expect(stderr).to.include(`metrics on 127.0.0.1:${port}/metrics`);
      await api.close();
    }
    expect(await listeningOn(port)).to.equal(false);
  });
});
