// safety/bad-fence-config-refused: `rekindle controller` as users start it, against the cluster
// under test, with configurations that would only have failed at the first node loss. Each must be
// refused at start with exit code 2 (a configuration the cluster does not fit is bad input too),
// name what is wrong, and leave nothing behind: no process, nothing listening, no NodeFence, no taint.
import { execa } from "execa";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { freeLoopbackPorts } from "../../lib/util/ports.js";
import { safetyScenario } from "./define.js";

interface BadStart {
  name: string;
  /** fence.yaml's text, or undefined for none. */
  fenceConfig?: string;
  flags?: string[];
  exitCode: number;
  /** What the error must name. */
  says: string;
}

const BAD_STARTS: readonly BadStart[] = [
  {
    name: "misspelled-driver",
    fenceConfig:
      "templates:\n  bmc: { driver: redfsh, options: { url: 'https://bmc.example' } }\ndefaultTemplate: bmc\n",
    exitCode: 2,
    says: 'unknown fence driver "redfsh"',
  },
  {
    name: "missing-secret",
    fenceConfig:
      "templates:\n  bmc: { driver: redfish, options: { url: 'https://bmc.example' }, secretRef: { name: no-such-secret } }\ndefaultTemplate: bmc\n",
    exitCode: 2,
    says: "Secret rekindle-system/no-such-secret",
  },
  {
    name: "newline-in-agent-option",
    fenceConfig:
      'templates:\n  ipmi: { driver: fence-agent, options: { agent: fence_ipmilan, ip: "10.0.0.1\\naction=on" }, secretRef: { name: s } }\ndefaultTemplate: ipmi\n',
    exitCode: 2,
    says: "ip",
  },
  {
    name: "plain-http-webhook",
    fenceConfig:
      "templates:\n  hook: { driver: webhook, options: { url: 'http://fencer.example' } }\ndefaultTemplate: hook\n",
    exitCode: 2,
    says: "https://",
  },
  { name: "check-interval-0s", flags: ["--check-interval", "0s"], exitCode: 2, says: "--check-interval" },
  { name: "unhealthy-after-0s", flags: ["--unhealthy-after", "0s"], exitCode: 2, says: "--unhealthy-after" },
];

const ACCEPTED = "unsafe:bad-configuration-accepted";

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => {
      resolve(false);
    });
  });
}

// The controller is not started in-process (safetyScenario declares usesController, so the harness
// installs the NodeFence CRD the CLI checks for).
export const badFenceConfigRefused = safetyScenario({
  id: "safety/bad-fence-config-refused",
  title: `${BAD_STARTS.length} configurations that would fail only at the first loss are refused at start, each named, nothing left behind`,
  requires: [],
  powerOffs: 0,
  never: {
    [ACCEPTED]: "a configuration the controller cannot act on is an exit code, not a surprise at 3 a.m.",
  },
  marks: [ACCEPTED],
  note: () => BAD_STARTS.map((b) => b.name).join(", "),
  async run(context) {
    const { steps, kc } = context;
    const dir = mkdtempSync(join(tmpdir(), "rekindle-bad-config-"));
    steps.registerUndo(`remove ${dir}`, () => {
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    });
    const kubeconfig = join(dir, "kubeconfig");
    writeFileSync(kubeconfig, kc.exportConfig(), { mode: 0o600 });
    context.faultStarts([]);
    for (const bad of BAD_STARTS) {
      await steps.step(`start the controller with ${bad.name}: refused`, async () => {
        const [port = 0] = await freeLoopbackPorts(1);
        const args = [
          "--kubeconfig",
          kubeconfig,
          "--metrics-port",
          String(port),
          "--install-crd",
          ...(bad.flags ?? []),
        ];
        if (bad.fenceConfig !== undefined) {
          const file = join(dir, `${bad.name}.yaml`);
          writeFileSync(file, bad.fenceConfig);
          args.push("--fence-config", file);
        } else {
          const file = join(dir, "good.yaml");
          writeFileSync(file, "templates:\n  m: { driver: manual }\ndefaultTemplate: m\n");
          args.push("--fence-config", file);
        }
        const result = await execa(
          process.execPath,
          [join(PROJECT_ROOT, "bin", "rekindle.js"), "controller", ...args],
          {
            reject: false,
            timeout: 60_000,
            ...(context.signal ? { cancelSignal: context.signal } : {}),
          },
        );
        const refused = result.exitCode === bad.exitCode && result.stderr.includes(bad.says);
        context.progress.info(
          `${bad.name}: exit ${String(result.exitCode)}: ${result.stderr.split("\n")[0] ?? ""}`,
        );
        if (!refused || result.timedOut || (await listening(port))) {
          context.progress.info(
            `${bad.name} was not refused as it should be:\n${result.stderr.slice(-2000)}`,
          );
          context.mark(ACCEPTED);
        }
      });
    }
  },
});
