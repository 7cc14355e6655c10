// The generic fence drivers against local stand-ins: a webhook over HTTPS with a private CA, a
// Redfish service that points elsewhere, a fence agent that hangs. Every call honours its signal.
import { expect } from "chai";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentInput, FenceAgentDriver } from "../../lib/controller/drivers/fence-agent.js";
import { ManualFenceDriver } from "../../lib/controller/drivers/manual.js";
import { powerOnIfOff } from "../../lib/controller/drivers/power-on.js";
import { RedfishFenceDriver } from "../../lib/controller/drivers/redfish.js";
import { type FenceDriver, type FenceTarget, type PowerState } from "../../lib/controller/drivers/types.js";
import { WebhookFenceDriver } from "../../lib/controller/drivers/webhook.js";
import { RekindleError } from "../../lib/errors.js";
import { rekindleRejection } from "../support/assertions.js";
import { startFakeApiServer } from "../support/fake-apiserver.js";
import { selfSignedLoopbackCertificate } from "../support/tls.js";
import { until } from "../support/until.js";

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return typeof address === "object" && address ? address.port : 0;
}

function withBody(handler: Handler) {
  return (req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      handler(req, res, body);
    });
  };
}

describe("fence drivers: transport, origin and cancellation", function () {
  this.timeout(20_000);
  const servers: Server[] = [];
  after(function () {
    for (const server of servers) server.close();
  });

  describe("webhook", function () {
    let httpsUrl = "";
    let caFile = "";
    const calls: string[] = [];

    before(async function () {
      const dir = mkdtempSync(join(tmpdir(), "rekindle-webhook-"));
      const { key, cert } = await selfSignedLoopbackCertificate(dir);
      caFile = cert;
      const server = createHttpsServer(
        { key: readFileSync(key), cert: readFileSync(cert) },
        withBody((req, res, body) => {
          calls.push(`${req.method ?? ""} ${req.url ?? ""} ${req.headers.authorization ?? ""} ${body}`);
          if (req.url?.startsWith("/hang")) return; // never answers
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ state: "off" }));
        }),
      );
      servers.push(server);
      httpsUrl = `https://127.0.0.1:${await listen(server)}`;
    });

    const target = (options: Record<string, string>): FenceTarget => ({
      node: "worker-1",
      options,
      credentials: { token: "t0ken" },
    });

    it("calls an https service verified with caFile, with the Secret's token", async function () {
      const driver = new WebhookFenceDriver();
      const t = target({ url: `${httpsUrl}/fence`, caFile: caFile });
      await driver.powerOff(t);
      expect(await driver.powerState(t)).to.equal("off");
      expect(calls).to.include(`POST /fence/power-off Bearer t0ken {"node":"worker-1"}`);
      expect(calls).to.include("GET /fence/power-state?node=worker-1 Bearer t0ken ");
    });

    it("refuses a certificate it cannot verify (no caFile), and plain http without allowHttp", async function () {
      const driver = new WebhookFenceDriver();
      const unverified = await driver.powerState(target({ url: httpsUrl })).catch((e: unknown) => e);
      expect(String(unverified)).to.match(/self[- ]signed/i);
      const http = await rekindleRejection(driver.powerOff(target({ url: "http://127.0.0.1:1" })));
      expect(http.message).to.include("needs an https:// url");
    });

    it("gives up after its timeout option, and at once when its signal aborts", async function () {
      const driver = new WebhookFenceDriver();
      const hanging = target({ url: `${httpsUrl}/hang`, caFile: caFile, timeout: "1s" });
      const started = Date.now();
      const timedOut = await rekindleRejection(driver.powerState(hanging));
      expect(timedOut.code).to.equal("TIMEOUT");
      expect(Date.now() - started).to.be.within(900, 4_000);

      // Its own 1 s timeout would end the call as TIMEOUT: ABORTED says the signal ended it first.
      const aborted = await rekindleRejection(driver.powerOff({ ...hanging }, AbortSignal.timeout(200)));
      expect(aborted.code).to.equal("ABORTED");
      expect((await rekindleRejection(driver.powerOff(hanging, AbortSignal.abort()))).code).to.equal(
        "ABORTED",
      );
    });
  });

  describe("redfish", function () {
    let url = "";
    let members: unknown[] = [];
    const requests: string[] = [];

    before(async function () {
      const server = createHttpServer(
        withBody((req, res, body) => {
          requests.push(`${req.method ?? ""} ${req.url ?? ""} ${req.headers.authorization ?? ""} ${body}`);
          const json = (value: unknown) => {
            res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
          };
          if (req.url === "/redfish/v1/Systems") json({ Members: members });
          else if (req.url === "/redfish/v1/Systems/abc")
            json({ Id: "abc", Name: "worker-1", PowerState: "On" });
          else if (req.url === "/redfish/v1/Systems/slow")
            return; // never answers
          else if (req.method === "POST") res.writeHead(204).end();
          else res.writeHead(404).end();
        }),
      );
      servers.push(server);
      url = `http://127.0.0.1:${await listen(server)}`;
    });

    const target = (): FenceTarget => ({
      node: "worker-1",
      options: { url, allowHttp: "true" },
      credentials: { username: "admin", password: "pw" },
    });

    it("finds the node's system by Name and resets it on the BMC's origin", async function () {
      members = [{ "@odata.id": "/redfish/v1/Systems/abc" }];
      const driver = new RedfishFenceDriver();
      expect(await driver.powerState(target())).to.equal("on");
      await driver.powerOff(target());
      const basic = `Basic ${Buffer.from("admin:pw").toString("base64")}`;
      expect(requests).to.include(
        `POST /redfish/v1/Systems/abc/Actions/ComputerSystem.Reset ${basic} {"ResetType":"ForceOff"}`,
      );
    });

    it("refuses to follow a member that points to another origin (the credentials would go there)", async function () {
      const driver = new RedfishFenceDriver();
      for (const elsewhere of [
        "https://evil.example/redfish/v1/Systems/abc",
        "//evil.example/redfish/v1/Systems/abc",
        `${url.replace("127.0.0.1", "localhost")}/redfish/v1/Systems/abc`,
        42,
      ]) {
        members = [{ "@odata.id": elsewhere }];
        requests.length = 0;
        const error = await rekindleRejection(driver.powerOff(target()));
        expect(error.message).to.include("not a path on its own origin: refused");
        expect(requests.map((r) => r.split(" ")[1])).to.deep.equal(["/redfish/v1/Systems"]);
      }
    });

    it("needs its credentials, and stops when its signal aborts", async function () {
      const driver = new RedfishFenceDriver();
      const noPassword = await rekindleRejection(
        driver.powerOff({ ...target(), credentials: { username: "admin" } }),
      );
      expect(noPassword.message).to.include("credentials lack password");
      members = [{ "@odata.id": "/redfish/v1/Systems/slow" }];
      // The request never gets an answer; its own 10 s timeout would end it as TIMEOUT.
      const aborted = await rekindleRejection(driver.powerState(target(), AbortSignal.timeout(200)));
      expect(aborted.code).to.equal("ABORTED");
    });
  });

  describe("fence-agent", function () {
    let dir = "";

    before(function () {
      dir = mkdtempSync(join(tmpdir(), "rekindle-agent-"));
      // A stand-in agent: records its stdin; status answers "off" (2); "hang" never ends.
      writeFileSync(
        join(dir, "fence_fake"),
        [
          "#!/bin/sh",
          `input=$(cat); printf '%s\\n' "$input" > ${join(dir, "stdin")}`,
          'case "$input" in *hang*) echo $$ > ' + join(dir, "pid") + "; sleep 30;; esac",
          'case "$input" in *action=status*) exit 2;; esac',
          "exit 0",
          "",
        ].join("\n"),
      );
      chmodSync(join(dir, "fence_fake"), 0o755);
    });

    const target = (
      options: Record<string, string> = {},
      credentials: Record<string, string> = {},
    ): FenceTarget => ({
      node: "worker-1",
      options: { agent: "fence_fake", ip: "10.0.0.1", ...options },
      credentials: { username: "admin", password: "pw", ...credentials },
    });

    it("passes options and credentials as key=value lines, the action last", async function () {
      const driver = new FenceAgentDriver(`${dir}:/usr/bin:/bin`);
      expect(await driver.powerState(target())).to.equal("off");
      expect(readFileSync(join(dir, "stdin"), "utf8")).to.equal(
        "ip=10.0.0.1\nusername=admin\npassword=pw\naction=status\n",
      );
    });

    it("refuses a value that would start a line of its own, never echoing a credential", function () {
      expect(() => agentInput(target({ ip: "10.0.0.1\naction=on" }), "off")).to.throw(
        RekindleError,
        /option ip \("10\.0\.0\.1\\naction=on"\) holds a newline/,
      );
      let message = "";
      try {
        agentInput(target({}, { password: "se\rcret" }), "off");
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).to.include("credential password holds a newline or other control character");
      expect(message).to.not.include("se\rcret");
      expect(() => agentInput(target({ "ip\nx": "1" }), "off")).to.throw(
        RekindleError,
        "not a fence agent parameter name",
      );
    });

    it("kills the agent when its signal aborts", async function () {
      this.timeout(30_000);
      const driver = new FenceAgentDriver(`${dir}:/usr/bin:/bin`);
      // The agent sleeps 30 s, past this test's timeout: only the signal can end the call in time.
      // The signal aborts once the agent has written its pid (on a starved machine it may start late).
      const abort = new AbortController();
      const pidFile = join(dir, "pid");
      rmSync(pidFile, { force: true });
      const call = rekindleRejection(driver.powerOff(target({ mode: "hang" }), abort.signal));
      await until(
        () => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "",
        "the agent's pid",
        {
          timeoutMs: 20_000,
          intervalMs: 10,
        },
      );
      abort.abort();
      const error = await call;
      expect(error.code).to.equal("ABORTED");
      const pid = Number(readFileSync(pidFile, "utf8"));
      expect(existsSync(`/proc/${pid}`)).to.equal(false);
    });
  });

  describe("manual", function () {
    it("stops reading the Node when its signal aborts", async function () {
      const api = await startFakeApiServer({
        "GET /api/v1/nodes/worker-1": () => ({ body: { metadata: { name: "worker-1" } } }),
        "GET /api/v1/nodes/worker-2": () => undefined,
      });
      try {
        const driver = new ManualFenceDriver(api.kc);
        const t = { node: "worker-1", options: {}, credentials: {} };
        expect(await driver.powerState(t)).to.equal("unknown");
        expect((await rekindleRejection(driver.powerState(t, AbortSignal.abort()))).code).to.equal("ABORTED");
        // worker-2's read never gets an answer: only the signal can end it.
        const hung = { ...t, node: "worker-2" };
        expect((await rekindleRejection(driver.powerState(hung, AbortSignal.timeout(200)))).code).to.equal(
          "ABORTED",
        );
      } finally {
        await api.close();
      }
    });
  });
});

describe("power on after a fence: only a node its driver reports off", function () {
  function fakeDriver(state: PowerState): FenceDriver & { poweredOn: number } {
    const driver = {
      name: "fake",
      poweredOn: 0,
      powerOff: () => Promise.resolve(),
      powerOn: () => {
        driver.poweredOn++;
        return Promise.resolve();
      },
      powerState: () => Promise.resolve(state),
    };
    return driver;
  }
  const target = { node: "worker-1", options: {}, credentials: {} };

  it("powers on a node that is off", async function () {
    const driver = fakeDriver("off");
    expect(await powerOnIfOff(driver, target)).to.equal("powered-on");
    expect(driver.poweredOn).to.equal(1);
  });

  it("leaves a node that is on alone, and refuses one whose state is unknown", async function () {
    const on = fakeDriver("on");
    expect(await powerOnIfOff(on, target)).to.equal("already-on");
    const unknown = fakeDriver("unknown");
    const error = await rekindleRejection(powerOnIfOff(unknown, target));
    expect(error.message).to.include("reports its power state unknown, not off");
    expect(on.poweredOn + unknown.poweredOn).to.equal(0);
  });
});
