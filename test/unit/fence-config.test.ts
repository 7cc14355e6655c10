// The fence configuration is checked whole at start-up: shape, drivers, references, each driver's
// options; and the controller's flags are bounded. Every refusal names the input and what is valid.
import { expect } from "chai";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { controllerSettings, parseControllerFlags } from "../../lib/controller/flags.js";
import { validateControllerConfig } from "../../lib/controller/config.js";
import { FenceAgentDriver } from "../../lib/controller/drivers/fence-agent.js";
import { fenceDriverRegistry, genericFenceDrivers } from "../../lib/controller/drivers/registry.js";
import type { FenceDriver } from "../../lib/controller/drivers/types.js";
import { loadFenceConfig, parseFenceConfig } from "../../lib/controller/fence-config-parse.js";
import { RekindleError } from "../../lib/errors.js";
import { k8s } from "../../lib/kube/client.js";

/** The sim driver's stand-in: a provider driver without a spec (options unchecked). */
const simDriver: FenceDriver = {
  name: "sim",
  powerOff: () => Promise.resolve(),
  powerState: () => Promise.resolve("off"),
};
/** Where the fence-agent driver finds its agents here: a stand-in fence_ipmilan, whatever this machine has installed. */
function standInAgents(): string {
  const dir = mkdtempSync(join(tmpdir(), "rekindle-fence-agents-"));
  writeFileSync(join(dir, "fence_ipmilan"), "#!/bin/sh\nexit 0\n");
  chmodSync(join(dir, "fence_ipmilan"), 0o755);
  return dir;
}
const drivers = fenceDriverRegistry([
  ...genericFenceDrivers(new k8s.KubeConfig()).filter((d) => d.name !== "fence-agent"),
  new FenceAgentDriver(standInAgents()),
  simDriver,
]);

function refusal(raw: unknown): RekindleError {
  try {
    parseFenceConfig(raw, drivers, "fence.yaml");
  } catch (error) {
    expect(error).to.be.instanceOf(RekindleError);
    expect((error as RekindleError).code).to.equal("INVALID_INPUT");
    return error as RekindleError;
  }
  throw new Error("the configuration was accepted");
}

const bmc = {
  driver: "redfish",
  options: { url: "https://{{node}}-bmc.example" },
  secretRef: { name: "bmc-credentials" },
};

describe("fence configuration: checked whole at start-up", function () {
  it("accepts a valid configuration and turns YAML numbers and booleans into strings", function () {
    const dir = mkdtempSync(join(tmpdir(), "rekindle-fence-config-"));
    const path = join(dir, "fence.yaml");
    writeFileSync(
      path,
      [
        "templates:",
        "  ipmi:",
        "    driver: fence-agent",
        "    options: { agent: fence_ipmilan, ip: '{{node}}-bmc', ipport: 623, lanplus: true }",
        "    secretRef: { name: ipmi }",
        "  hook:",
        "    driver: webhook",
        "    options: { url: https://fencer.example/api, timeout: 5s }",
        "nodes: { worker-9: hook }",
        "defaultTemplate: ipmi",
        "",
      ].join("\n"),
    );
    const config = loadFenceConfig(path, drivers);
    expect(config.templates["ipmi"]?.options).to.deep.equal({
      agent: "fence_ipmilan",
      ip: "{{node}}-bmc",
      ipport: "623",
      lanplus: "true",
    });
    expect(config.nodes).to.deep.equal({ "worker-9": "hook" });
  });

  it("refuses an unknown driver, listing the registered ones", function () {
    const error = refusal({ templates: { t: { driver: "redfsh" } }, defaultTemplate: "t" });
    expect(error.message)
      .to.include('templates.t.driver: unknown fence driver "redfsh"')
      .and.include("valid: manual, webhook, redfish, fence-agent, sim");
  });

  it("refuses unknown keys at every level, naming the valid ones", function () {
    const error = refusal({
      templates: { t: { driver: "sim", option: {}, secretRef: { name: "s", nmespace: "x" } } },
      defaultTemplate: "t",
      node: {},
    });
    expect(error.message)
      .to.include('top level: unknown key "node"; valid: templates, nodes, defaultTemplate')
      .and.include('templates.t: unknown key "option"; valid: driver, options, secretRef')
      .and.include('templates.t.secretRef: unknown key "nmespace"; valid: name, namespace');
  });

  it("refuses references to templates that do not exist, and a configuration that maps no node", function () {
    expect(refusal({ templates: { t: { driver: "sim" } }, defaultTemplate: "bmc" }).message).to.include(
      'defaultTemplate: names template "bmc", which does not exist; valid: t',
    );
    expect(
      refusal({ templates: { t: { driver: "sim" } }, nodes: { "worker-1": "x" }, defaultTemplate: "t" })
        .message,
    ).to.include('nodes.worker-1: names template "x"');
    expect(refusal({ templates: { t: { driver: "sim" } } }).message).to.include(
      "neither defaultTemplate nor nodes",
    );
    expect(refusal({ templates: {} }).message).to.include(
      "templates: is a map; valid: a map with at least one",
    );
    expect(refusal("templates").message).to.include("the file: is a string");
  });

  it("refuses option values that are not strings, numbers or booleans, and unknown placeholders", function () {
    const error = refusal({
      templates: {
        t: { driver: "fence-agent", options: { agent: "fence_ipmilan", ip: ["a"], port: "{{nodename}}" } },
      },
      defaultTemplate: "t",
    });
    expect(error.message)
      .to.include("templates.t.options.ip: is a list; valid: a string (or a number or boolean)")
      .and.include("templates.t.options.port: unknown placeholder {{nodename}}; valid: {{node}}");
  });

  it("checks each driver's options: required, known, valid values", function () {
    expect(refusal({ templates: { t: { driver: "webhook" } }, defaultTemplate: "t" }).message).to.include(
      "option url is required",
    );
    expect(
      refusal({
        templates: { t: { ...bmc, options: { ...bmc.options, insecur: "true" } } },
        defaultTemplate: "t",
      }).message,
    ).to.include('unknown option "insecur"; valid: url, system, insecure, caFile, allowHttp, timeout');
    expect(
      refusal({ templates: { t: { driver: "fence-agent", options: { agent: "rm" } } }, defaultTemplate: "t" })
        .message,
    ).to.include('option agent is "rm"; valid: a ClusterLabs agent name');
    expect(
      refusal({
        templates: { t: { driver: "webhook", options: { url: "https://x.example", timeout: "0s" } } },
        defaultTemplate: "t",
      }).message,
    ).to.include('option timeout is "0s"; valid: a duration from 1s to 5m');
    expect(
      refusal({ templates: { t: { driver: "manual", options: { note: "x" } } }, defaultTemplate: "t" })
        .message,
    ).to.include('unknown option "note"; valid: none');
  });

  it("requires https (allowHttp for a lab), a Secret for redfish, and a readable caFile", function () {
    expect(
      refusal({
        templates: { t: { driver: "webhook", options: { url: "http://x.example" } } },
        defaultTemplate: "t",
      }).message,
    ).to.include("needs an https:// url");
    expect(() =>
      parseFenceConfig(
        {
          templates: { t: { driver: "webhook", options: { url: "http://x.example", allowHttp: "true" } } },
          defaultTemplate: "t",
        },
        drivers,
        "fence.yaml",
      ),
    ).to.not.throw();
    expect(
      refusal({
        templates: { t: { driver: "redfish", options: { url: "https://b" } } },
        defaultTemplate: "t",
      }).message,
    ).to.include("driver redfish needs a secretRef: a Secret with username, password");
    expect(
      refusal({
        templates: { t: { ...bmc, options: { ...bmc.options, caFile: "/nonexistent/ca.crt" } } },
        defaultTemplate: "t",
      }).message,
    ).to.include("caFile /nonexistent/ca.crt cannot be read (ENOENT)");
    expect(
      refusal({
        templates: { t: { ...bmc, options: { url: "https://admin:pw@bmc.example" } } },
        defaultTemplate: "t",
      }).message,
    ).to.include("without user:password@");
  });

  it("refuses a newline (or any control character) in what reaches a fence agent's stdin", function () {
    const error = refusal({
      templates: {
        t: {
          driver: "fence-agent",
          options: { agent: "fence_ipmilan", ip: "10.0.0.1\naction=on", action: "off" },
        },
      },
      defaultTemplate: "t",
    });
    expect(error.message)
      .to.include("option ip")
      .and.include("holds a newline or other control character")
      .and.include("option action is set by the controller");
  });

  it("reports every problem at once, with the file named", function () {
    const error = refusal({ templates: { a: { driver: "x" }, b: { driver: "y" } }, defaultTemplate: "c" });
    expect(error.message).to.match(/^invalid fence configuration fence\.yaml:\n/);
    expect((error.details["problems"] as string[]).length).to.equal(3);
  });

  it("a file that cannot be read or parsed is refused naming it", function () {
    expect(() => loadFenceConfig("/nonexistent/fence.yaml", drivers)).to.throw(
      RekindleError,
      "cannot read fence configuration /nonexistent/fence.yaml",
    );
  });
});

describe("controller flags: bounded and consistent", function () {
  const settings = (...args: string[]) => controllerSettings(parseControllerFlags(args));

  it("takes the defaults, and valid values", function () {
    expect(settings().config).to.deep.include({ unhealthyAfterMs: 20_000, checkIntervalMs: 1_000 });
    const { config, metricsPort } = settings(
      "--unhealthy-after",
      "6s",
      "--check-interval",
      "500ms",
      "--metrics-port",
      "0",
    );
    expect(config).to.deep.include({ unhealthyAfterMs: 6_000, checkIntervalMs: 500 });
    expect(metricsPort).to.equal(0);
  });

  it("refuses 0 and absurd durations, naming the valid range", function () {
    expect(() => settings("--check-interval", "0s")).to.throw(
      RekindleError,
      '--check-interval "0s" is out of range; valid: a duration from 100ms to 1m',
    );
    expect(() => settings("--unhealthy-after", "0s")).to.throw(
      RekindleError,
      '--unhealthy-after "0s" is out of range; valid: a duration from 1s to 1h',
    );
    expect(() => settings("--unhealthy-after", "48h")).to.throw(RekindleError, "out of range");
    expect(() => settings("--check-interval", "soon")).to.throw(
      RekindleError,
      'unknown --check-interval "soon"',
    );
  });

  it("needs unhealthyAfter to span several check intervals, and a check interval the leader Lease allows", function () {
    expect(() => settings("--unhealthy-after", "2s", "--check-interval", "1s")).to.throw(
      RekindleError,
      "--unhealthy-after 2s is shorter than 3 check intervals (--check-interval 1s); valid: at least 3s",
    );
    expect(() => settings("--check-interval", "10s", "--unhealthy-after", "1m", "--leader-elect")).to.throw(
      RekindleError,
      "--check-interval 10s is too long for leader election (Lease 15s: a standby takes over with a view of the nodes at most one check old); valid: at most 5s",
    );
    expect(() => settings("--check-interval", "10s", "--unhealthy-after", "1m")).to.not.throw();
  });

  it("takes the safety settings, bounded", function () {
    const { config } = settings(
      "--healthy-before-unfence",
      "30s",
      "--cleanup-timeout",
      "5m",
      "--stale-wait",
      "1m",
      "--driver-timeout",
      "20s",
      "--max-fences-per-window",
      "5",
      "--fence-rate-window",
      "2h",
      "--manual-confirm-timeout",
      "15m",
      "--max-retry-backoff",
      "1m",
      "--recovery-timeout",
      "20m",
    );
    expect(config).to.deep.include({
      healthyBeforeUnfenceMs: 30_000,
      cleanupTimeoutMs: 300_000,
      staleWaitMs: 60_000,
      driverTimeoutMs: 20_000,
      maxFencesPerWindow: 5,
      fenceRateWindowMs: 7_200_000,
      manualConfirmTimeoutMs: 900_000,
      maxRetryBackoffMs: 60_000,
      recoveryTimeoutMs: 1_200_000,
    });
    expect(() => settings("--recovery-timeout", "10s")).to.throw(RekindleError, "--recovery-timeout");
    expect(() => settings("--driver-timeout", "0s")).to.throw(RekindleError, "--driver-timeout");
    expect(() => settings("--max-fences-per-window", "0")).to.throw(RekindleError, "a count of 1 or more");
  });

  it("reads the Lease watch at most every 250 ms by default, at most a quarter check; 0 reads each renewal", function () {
    expect(settings().config.leaseReadIntervalMs).to.equal(250);
    expect(settings("--check-interval", "400ms").config.leaseReadIntervalMs).to.equal(100);
    expect(settings("--lease-read-interval", "0s").config.leaseReadIntervalMs).to.equal(0);
    expect(settings("--lease-read-interval", "100ms").config.leaseReadIntervalMs).to.equal(100);
    expect(() => settings("--lease-read-interval", "500ms")).to.throw(
      RekindleError,
      "--lease-read-interval 500ms is longer than a quarter of --check-interval 1s; valid: at most 250ms",
    );
    expect(() => settings("--lease-read-interval", "1m")).to.throw(RekindleError, "out of range");
    expect(() =>
      settings("--check-interval", "10s", "--unhealthy-after", "1m", "--lease-read-interval", "1s"),
    ).to.throw(
      RekindleError,
      "--lease-read-interval 1s is longer than a quarter of --watch-stale-after 3s; valid: at most 750ms",
    );
  });

  it("refuses a bad port, maxUnhealthy or namespace", function () {
    expect(() => settings("--metrics-port", "70000")).to.throw(RekindleError, "a TCP port from 0 to 65535");
    expect(() => settings("--max-unhealthy", "half")).to.throw(RekindleError, 'unknown maxUnhealthy "half"');
    expect(() => settings("--namespace", "Rekindle_System")).to.throw(
      RekindleError,
      "a Kubernetes namespace name",
    );
  });

  it("validates a programmatic configuration the same way", function () {
    const config = {
      checkIntervalMs: 0,
      unhealthyAfterMs: 20_000,
      maxUnhealthy: "40%",
      namespace: "rekindle-system",
    };
    expect(() => {
      validateControllerConfig(config);
    }).to.throw(RekindleError, '--check-interval "0ms" is out of range');
  });
});
