// Every command and subcommand of the table answers -h/--help with its usage on stdout and exit 0,
// before its own parsing (nothing starts); bad words, options and -o values exit 2 naming valid forms.
import { expect } from "chai";
import { COMMANDS, rekindleUsage } from "../../lib/cli/command-table.js";
import { asksForHelp, usageText, walkCommands } from "../../lib/cli/dispatch.js";
import { cli } from "../support/cli-capture.js";

describe("CLI help on every command of the table", function () {
  this.timeout(60_000);
  const commands = walkCommands(COMMANDS);

  it("walks every command and subcommand (sim node and sim apiserver included)", function () {
    const paths = commands.map(({ path }) => path.join(" "));
    expect(paths).to.include.members([
      "run",
      "list",
      "compare",
      "controller",
      "sim",
      "sim up",
      "sim status",
      "sim down",
      "sim node",
      "sim apiserver",
      "kind",
      "kind build-image",
      "kind build-controller-image",
      "version",
      "help",
    ]);
  });

  for (const { path } of commands) {
    for (const flag of ["--help", "-h"]) {
      it(`rekindle ${path.join(" ")} ${flag} prints its usage on stdout and exits 0`, async function () {
        const entry = commands.find((c) => c.path.join(" ") === path.join(" "));
        const usage = await usageText(entry!.spec, path);
        const { code, stdout, stderr } = await cli([...path, flag]);
        expect(stderr).to.equal("");
        expect(code).to.equal(0);
        expect(stdout).to.equal(`${usage}\n`);
        expect(usage).to.not.include("not available in this installation");
        // A leaf's usage names its own words (a group's lists its subcommands').
        expect(usage).to.include(`rekindle ${path.join(" ")}`);
      });
    }
  }

  it("takes --help after other options too, before they are parsed (sim up never starts)", async function () {
    const { code, stdout } = await cli(["sim", "up", "--workers", "nine", "--help"]);
    expect(code).to.equal(0);
    expect(stdout).to.include("rekindle sim up");
  });

  it("sim node's actions answer --help with sim node's usage", async function () {
    const { code, stdout } = await cli(["sim", "node", "stop", "worker-1", "-h"]);
    expect(code).to.equal(0);
    expect(stdout).to.include("rekindle sim node clock <node> --offset D");
  });

  it("rekindle --help, -h and help fit in a screen: every command and its summary, the exit codes, the docs", async function () {
    const usage = await rekindleUsage();
    for (const argv of [["--help"], ["-h"], ["help"]]) {
      const { code, stdout } = await cli(argv);
      expect(code, argv.join(" ")).to.equal(0);
      expect(stdout).to.equal(`${usage}\n`);
    }
    expect(usage.split("\n").length).to.be.at.most(40);
    for (const { name, summary } of COMMANDS) expect(usage).to.include(`\n  ${name} `).and.include(summary);
    expect(usage).to.include("exit codes:\n  0 ").and.include("\n  3    ").and.include("\n  130 ");
    expect(usage).to.include("docs/user.md").and.include("rekindle help <command>");
    expect(usage).to.include("-q, --quiet").and.include("-v, --verbose").and.include("-o text|json");
    // Not the commands' own usages: those are a `help <command>` away.
    expect(usage).to.not.include("families:").and.not.include("rekindle sim up [--workers N]");
    const none = await cli([]);
    expect(none.code).to.equal(2);
    expect(none.stdout).to.equal("");
    expect(none.stderr).to.equal(`${usage}\n`);
  });

  for (const { path } of commands.filter((c) => c.path[0] !== "help")) {
    it(`rekindle help ${path.join(" ")} prints what rekindle ${path.join(" ")} --help prints`, async function () {
      const help = await cli(["help", ...path]);
      const flag = await cli([...path, "--help"]);
      expect(help.code).to.equal(0);
      expect(help.stderr).to.equal("");
      expect(help.stdout).to.equal(flag.stdout);
    });
  }

  it("help <command...> prints that command's usage; an unknown one exits 2 naming the valid ones", async function () {
    const { code, stdout } = await cli(["help", "sim", "status"]);
    expect(code).to.equal(0);
    expect(stdout).to.include("rekindle sim status [--name X] [-o text|json]");
    // A leaf's own words after it (node's verbs, sim node's actions) still name it.
    expect((await cli(["help", "node", "stop"])).stdout).to.equal((await cli(["node", "--help"])).stdout);
    expect((await cli(["help", "sim", "node", "clock"])).stdout).to.include("rekindle sim node clock <node>");
    const bad = await cli(["help", "sim", "reboot"]);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include('unknown command "sim reboot"').and.include("sim apiserver");
    expect(bad.stderr.trimEnd().split("\n")).to.have.length(2);
  });

  it("stops looking for -h after --", function () {
    expect(asksForHelp(["a", "-h"])).to.equal(true);
    expect(asksForHelp(["--", "-h"])).to.equal(false);
    expect(asksForHelp(["--hel"])).to.equal(false);
  });
});

describe("CLI bad input (exit 2, nothing started)", function () {
  this.timeout(60_000);

  it("an unknown option names it and the full command path's --help", async function () {
    for (const [argv, see] of [
      [["run", "--bogus"], "rekindle run --help"],
      [["sim", "up", "--nodes", "3"], "rekindle sim up --help"],
      [["kind", "build-image", "--bogus"], "rekindle kind build-image --help"],
      [["sim", "apiserver", "pause", "--bogus"], "rekindle sim apiserver --help"],
      [["controller", "--bogus"], "rekindle controller --help"],
    ] as const) {
      const { code, stdout, stderr } = await cli([...argv]);
      expect(code, argv.join(" ")).to.equal(2);
      expect(stdout).to.equal("");
      expect(stderr)
        .to.include(`'${argv.at(-1) === "3" ? "--nodes" : argv.at(-1)}'`)
        .and.include(`see: ${see}`);
    }
  });

  it("an unknown subcommand names the valid ones at its level", async function () {
    const { code, stderr } = await cli(["kind", "build"]);
    expect(code).to.equal(2);
    expect(stderr).to.include('unknown kind command "build"; valid: build-image, build-controller-image');
  });

  it("a group with no subcommand prints its usage on stderr and exits 2", async function () {
    const { code, stdout, stderr } = await cli(["kind"]);
    expect(code).to.equal(2);
    expect(stdout).to.equal("");
    expect(stderr).to.include("rekindle kind build-image");
  });

  it("an -o value other than text or json names the valid ones, on every command that takes it", async function () {
    for (const argv of [
      ["list", "-o", "yaml"],
      ["list", "--output", "table"],
      ["version", "-o", "xml"],
      ["sim", "status", "--name", "no-such-cluster-here", "-o", "wide"],
    ]) {
      const { code, stdout, stderr } = await cli(argv);
      expect(code, argv.join(" ")).to.equal(2);
      expect(stdout).to.equal("");
      expect(stderr).to.include(`"${argv.at(-1)}"; valid: text, json`);
    }
  });

  it("sim status: --json is -o json, and contradicting -o text is refused", async function () {
    const { code, stderr } = await cli(["sim", "status", "--json", "-o", "text"]);
    expect(code).to.equal(2);
    expect(stderr).to.include("--json and -o text contradict each other");
  });
});

describe("CLI machine-readable output", function () {
  this.timeout(60_000);

  it("list -o json prints only JSON: every scenario with its windows", async function () {
    const text = await cli(["list"]);
    const { code, stdout, stderr } = await cli(["list", "-o", "json", "--suite", "node-loss"]);
    expect(code).to.equal(0);
    expect(stderr).to.equal("");
    const parsed = JSON.parse(stdout) as {
      profile: string;
      scenarios: {
        id: string;
        family: string;
        milestones: { name: string; maxMs: number | null; fromFault?: { maxMs: number | null } }[];
      }[];
    };
    expect(parsed.profile).to.equal("default");
    expect(parsed.scenarios.length).to.be.greaterThan(0);
    for (const s of parsed.scenarios) {
      expect(s.family).to.equal("node-loss");
      expect(s.id.startsWith("node-loss/")).to.equal(true);
      expect(text.stdout).to.include(`${s.id}\n`);
      expect(s.milestones.length).to.be.greaterThan(0);
    }
  });

  it("version and --version print the package version, the git sha and the pinned versions", async function () {
    const { readFileSync } = await import("node:fs");
    const { PROJECT_ROOT } = await import("../../lib/util/project-files.js");
    const { PINNED_SIM_VERSIONS } = await import("../../lib/build/versions.js");
    const { PINNED_KIND_VERSION } = await import("../../lib/cluster/kind/cli.js");
    const pkg = JSON.parse(readFileSync(`${PROJECT_ROOT}/package.json`, "utf8")) as { version: string };
    const json = await cli(["version", "-o", "json"]);
    expect(json.code).to.equal(0);
    const report = JSON.parse(json.stdout) as {
      rekindle: { version: string; gitSha: string; dirty: boolean | null };
      kubernetes: string;
      etcd: string;
      kwok: string;
      kind: string;
    };
    expect(report.rekindle.version).to.equal(pkg.version);
    // The tests run from a checkout: the sha is a commit's.
    expect(report.rekindle.gitSha).to.match(/^[0-9a-f]{40}$/);
    expect(report.rekindle.dirty).to.be.a("boolean");
    expect(report).to.include({
      kubernetes: PINNED_SIM_VERSIONS.kubernetes,
      etcd: PINNED_SIM_VERSIONS.etcd,
      kwok: PINNED_SIM_VERSIONS.kwok,
      kind: PINNED_KIND_VERSION,
    });
    for (const argv of [["--version"], ["-V"], ["version"]]) {
      const { code, stdout } = await cli(argv);
      expect(code).to.equal(0);
      expect(stdout.split("\n")[0]).to.equal(`rekindle ${pkg.version}`);
      for (const v of [report.rekindle.gitSha, report.kubernetes, report.etcd, report.kwok, report.kind])
        expect(stdout).to.include(v);
    }
  });
});
