// Loopback ports for clusters side by side: chosen below the ephemeral range, never two alike while
// reserved (by this process or another live one), a dead process's reservation reclaimed only once
// it is old, a bound port skipped, and a range with too few free ports a CONFLICT naming it.
import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RekindleError } from "../../lib/errors.js";
import {
  ephemeralRangeLow,
  freeLoopbackPorts,
  LOWEST_PORT,
  ORPHAN_RESERVATION_MS,
  releaseLoopbackPorts,
} from "../../lib/util/ports.js";

/** A range of `size` ports that are free now: found by the default chooser, then released. */
async function freeRange(size: number, probeDir: string): Promise<[number, number]> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const [port = 0] = await freeLoopbackPorts(1, { reservationsDir: probeDir });
    releaseLoopbackPorts([port], { reservationsDir: probeDir });
    const range: [number, number] = [port, port + size];
    const all = await freeLoopbackPorts(size, { range, reservationsDir: probeDir }).catch(() => undefined);
    if (all !== undefined) {
      releaseLoopbackPorts(all, { reservationsDir: probeDir });
      return range;
    }
  }
  throw new Error(`no ${size} free ports in a row found in 20 tries`);
}

function deadPid(): number {
  // A pid no process has: above Linux's pid_max ceiling (2^22).
  return 4_194_304 + 17;
}

describe("loopback ports", function () {
  this.timeout(20_000);
  let dir: string;
  let sleeper: ChildProcess | undefined;
  let server: Server | undefined;

  let probeDir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "rekindle-ports-test-"));
    probeDir = mkdtempSync(join(tmpdir(), "rekindle-ports-probe-"));
  });

  afterEach(async () => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(probeDir, { recursive: true, force: true });
    sleeper?.kill();
    sleeper = undefined;
    if (server !== undefined) await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it("chooses distinct ports below the kernel's ephemeral range, each reserved for this process", async () => {
    const ports = await freeLoopbackPorts(6, { reservationsDir: dir });
    expect(new Set(ports).size).to.equal(6);
    for (const port of ports) {
      expect(port).to.be.at.least(LOWEST_PORT);
      expect(port).to.be.below(ephemeralRangeLow());
    }
    expect(readdirSync(dir).map(Number).sort()).to.deep.equal([...ports].sort());
    releaseLoopbackPorts(ports, { reservationsDir: dir });
    expect(readdirSync(dir)).to.deep.equal([]);
  });

  it("never chooses a port another live process has reserved, nor one this process holds", async () => {
    const range = await freeRange(3, probeDir);
    sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    writeFileSync(join(dir, String(range[0])), String(sleeper.pid));
    const [mine] = await freeLoopbackPorts(1, { range, reservationsDir: dir, random: () => 0 });
    const [other] = await freeLoopbackPorts(1, { range, reservationsDir: dir, random: () => 0 });
    expect([mine, other].sort()).to.deep.equal([range[0] + 1, range[0] + 2]);
    const full = await freeLoopbackPorts(1, { range, reservationsDir: dir }).catch((e: unknown) => e);
    expect(full).to.be.instanceOf(RekindleError);
    expect((full as RekindleError).code).to.equal("CONFLICT");
    expect((full as RekindleError).message).to.include(`${range[0]}-${range[1] - 1}`);
  });

  it("reclaims a dead process's reservation only once it is older than the orphan time", async () => {
    const range = await freeRange(1, probeDir);
    const file = join(dir, String(range[0]));
    writeFileSync(file, String(deadPid()));
    const young = await freeLoopbackPorts(1, { range, reservationsDir: dir }).catch((e: unknown) => e);
    expect((young as RekindleError).code).to.equal("CONFLICT");
    const old = (Date.now() - ORPHAN_RESERVATION_MS - 1000) / 1000;
    utimesSync(file, old, old);
    expect(await freeLoopbackPorts(1, { range, reservationsDir: dir })).to.deep.equal([range[0]]);
  });

  it("skips a port something is listening on, and releases what it reserved when it cannot find enough", async () => {
    const range = await freeRange(2, probeDir);
    server = createServer();
    await new Promise<void>((resolve) => server?.listen(range[0], "127.0.0.1", resolve));
    expect(await freeLoopbackPorts(1, { range, reservationsDir: dir })).to.deep.equal([range[0] + 1]);
    releaseLoopbackPorts([range[0] + 1], { reservationsDir: dir });
    const short = await freeLoopbackPorts(2, { range, reservationsDir: dir }).catch((e: unknown) => e);
    expect((short as RekindleError).code).to.equal("CONFLICT");
    expect(readdirSync(dir)).to.deep.equal([]);
  });
});
