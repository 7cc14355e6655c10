// Starts the sushy-tools Redfish emulator (fake driver) on loopback over HTTPS with basic auth, one
// fake system per name. Looks for sushy-emulator in $REKINDLE_SUSHY_EMULATOR, then in the venv
// scripts/prepare-test-env.sh makes (<cache>/tools/sushy-venv), then on PATH.
import { execa } from "execa";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { isDaemonRunning, logTail, spawnDaemon, stopDaemon } from "../../lib/util/daemon.js";
import { httpGet } from "../../lib/util/http.js";
import { cacheRoot } from "../../lib/util/paths.js";
import { freeLoopbackPorts } from "../../lib/util/ports.js";
import { pollUntil } from "../../lib/util/time.js";
import { HINT } from "./prerequisites.js";
import { selfSignedLoopbackCertificate } from "./tls.js";

export interface RedfishEmulator {
  url: string;
  port: number;
  username: string;
  password: string;
  systems: Record<string, string>;
  stop(): Promise<void>;
}

function emulatorPath(): string | undefined {
  const candidates = [
    process.env["REKINDLE_SUSHY_EMULATOR"],
    join(cacheRoot(), "tools", "sushy-venv", "bin", "sushy-emulator"),
    ...(process.env["PATH"] ?? "").split(delimiter).map((dir) => dir && join(dir, "sushy-emulator")),
  ].filter((p): p is string => !!p);
  return candidates.find((p) => existsSync(p));
}

/**
 * The Python that runs `emulator` (it hashes the password with sushy-tools' own bcrypt): the
 * venv's beside it, else the one its #! line names. Never a bare python3 when the emulator is not
 * found: the system's has no bcrypt, and "No module named 'bcrypt'" hid the real problem.
 */
function emulatorPython(emulator: string | undefined): string | undefined {
  if (emulator === undefined) return undefined;
  const beside = join(dirname(emulator), "python");
  if (existsSync(beside)) return beside;
  try {
    const shebang = /^#!\s*(\S+)/.exec(readFileSync(emulator, "utf8").split("\n")[0] ?? "")?.[1];
    return shebang !== undefined && existsSync(shebang) ? shebang : undefined;
  } catch {
    return undefined;
  }
}

/** Why the emulator cannot run here, or undefined when it can. */
export async function sushyEmulatorMissing(): Promise<string | undefined> {
  const emulator = emulatorPath();
  const python = emulatorPython(emulator);
  if (emulator === undefined || python === undefined)
    return `no sushy-emulator (looked in $REKINDLE_SUSHY_EMULATOR, ${join(cacheRoot(), "tools", "sushy-venv")}, PATH); ${HINT}`;
  const probe = await execa(python, ["-c", "import bcrypt, sushy_tools.emulator.main"], { reject: false });
  if (probe.exitCode !== 0)
    return `${emulator} cannot run: ${probe.stderr.trim().split("\n").at(-1) ?? ""}; ${HINT}`;
  const openssl = await execa("openssl", ["version"], { reject: false });
  return openssl.exitCode === 0 ? undefined : `no openssl for the emulator's certificate; ${HINT}`;
}

export async function startRedfishEmulator(names: string[]): Promise<RedfishEmulator> {
  const dir = mkdtempSync(join(tmpdir(), "rekindle-redfish-"));
  const emulator = emulatorPath() ?? "sushy-emulator";
  const python = emulatorPython(emulator) ?? "python3";
  const { key, cert } = await selfSignedLoopbackCertificate(dir);
  const username = "admin";
  const password = `pw-${randomUUID().slice(0, 8)}`;
  const hash = await execa(python, [
    "-c",
    `import bcrypt,sys; print(bcrypt.hashpw(sys.argv[1].encode(), bcrypt.gensalt()).decode())`,
    password,
  ]);
  writeFileSync(join(dir, "htpasswd"), `${username}:${hash.stdout.trim()}\n`);
  const systems = Object.fromEntries(names.map((name) => [name, randomUUID()]));
  const fakeSystems = Object.entries(systems)
    .map(
      ([name, uuid]) =>
        `{'uuid': '${uuid}', 'name': '${name}', 'power_state': 'On', 'external_notifier': False, 'nics': [{'mac': '00:5c:52:31:3a:9c', 'ip': '127.0.0.1'}]}`,
    )
    .join(",\n  ");
  writeFileSync(
    join(dir, "config.py"),
    [
      "SUSHY_EMULATOR_FAKE_DRIVER = True",
      `SUSHY_EMULATOR_FAKE_SYSTEMS = [\n  ${fakeSystems}\n]`,
      `SUSHY_EMULATOR_AUTH_FILE = '${join(dir, "htpasswd")}'`,
      `SUSHY_EMULATOR_STATE_DIR = '${join(dir, "state")}'`,
      "SUSHY_EMULATOR_LISTEN_IP = '127.0.0.1'",
      "",
    ].join("\n"),
  );
  const [port = 0] = await freeLoopbackPorts(1);
  const record = spawnDaemon(
    {
      name: "sushy-emulator",
      command: emulator,
      args: [
        "--config",
        join(dir, "config.py"),
        "-i",
        "127.0.0.1",
        "-p",
        String(port),
        "--ssl-certificate",
        cert,
        "--ssl-key",
        key,
      ],
      logPath: join(dir, "sushy.log"),
    },
    `redfish-${port}`,
  );
  const url = `https://127.0.0.1:${port}`;
  try {
    await pollUntil(
      async () => {
        if (!isDaemonRunning(record))
          throw new Error(`sushy-emulator (${emulator}) exited: ${logTail(record.logPath)}`);
        try {
          return (await httpGet(`${url}/redfish/v1/`, { insecure: true })).status === 200 ? true : undefined;
        } catch {
          return undefined;
        }
      },
      { what: "the Redfish emulator", timeoutMs: 30_000 },
    );
  } catch (error) {
    await stopDaemon(record);
    throw error;
  }
  return { url, port, username, password, systems, stop: () => stopDaemon(record) };
}
