// Bad command lines in one line (what is wrong, the closest valid word, where the usage is) and
// exit 2; and the exit-code table the help prints, followed by every kind of error the CLI meets.
import { expect } from "chai";
import { RekindleError } from "../../lib/errors.js";
import { EXIT_CODE_TABLE, EXIT_CODES, exitCodeForError, exitCodeLines } from "../../lib/cli/exit-codes.js";
import { didYouMean, editDistance } from "../../lib/util/did-you-mean.js";
import { cli } from "../support/cli-capture.js";
import { list, startFakeApiServer, status } from "../support/fake-apiserver.js";

describe("did you mean", function () {
  it("counts insertions, deletions, substitutions and neighbour swaps as one edit each", function () {
    expect(editDistance("nodes-selecter", "nodes-selector")).to.equal(1);
    expect(editDistance("nodes-selecter", "node-selector")).to.equal(2);
    expect(editDistance("rnu", "run")).to.equal(1);
    expect(editDistance("", "abc")).to.equal(3);
    expect(editDistance("same", "same")).to.equal(0);
  });

  it("prefers a prefix match, then the nearest within a third of the word, else nothing", function () {
    expect(didYouMean("work", ["zones", "workers"])).to.equal("workers");
    expect(didYouMean("build", ["build-image", "build-controller-image"])).to.equal("build-image");
    expect(didYouMean("node-selecter", ["nodes", "node-selector"])).to.equal("node-selector");
    expect(didYouMean("bogus", ["scenario", "shard", "suite"])).to.equal(undefined);
    expect(didYouMean("x", ["y"])).to.equal("y");
    expect(didYouMean("ab", ["xy"])).to.equal(undefined);
  });
});

/** stderr as lines, without the last empty one. */
const lines = (text: string): string[] => text.replace(/\n$/, "").split("\n");

describe("CLI usage errors: one line and a pointer, exit 2", function () {
  this.timeout(60_000);

  it("an unknown option close to a known one says which was meant, and nothing else", async function () {
    for (const [argv, line, see] of [
      [
        ["run", "--nodes-selecter", "a=b"],
        "unknown option '--nodes-selecter'; did you mean --node-selector?",
        "run",
      ],
      [
        ["run", "--node-selecter", "a=b"],
        "unknown option '--node-selecter'; did you mean --node-selector?",
        "run",
      ],
      [
        ["controller", "--node-selecter", "a=b"],
        "unknown option '--node-selecter'; did you mean --node-selector?",
        "controller",
      ],
      [["sim", "up", "--work", "3"], "unknown option '--work'; did you mean --workers?", "sim up"],
      [["list", "--scenaro", "x"], "unknown option '--scenaro'; did you mean --scenario?", "list"],
      [["run", "--bogus"], "unknown option '--bogus'", "run"],
    ] as const) {
      const { code, stdout, stderr } = await cli([...argv]);
      expect(code, argv.join(" ")).to.equal(2);
      expect(stdout).to.equal("");
      expect(lines(stderr)).to.deep.equal([
        `error [INVALID_INPUT]: ${line}`,
        `  see: rekindle ${see} --help`,
      ]);
    }
  });

  it("a missing value, a value to a switch and an unexpected argument are one line each", async function () {
    for (const [argv, line] of [
      [["list", "--scenario"], "option '--scenario' needs a value"],
      [["run", "--keep-cluster=yes"], "option '--keep-cluster' takes no value"],
      [["list", "extra"], "unexpected argument 'extra': this command takes options only"],
    ] as const) {
      const { code, stderr } = await cli([...argv]);
      expect(code, argv.join(" ")).to.equal(2);
      expect(lines(stderr)).to.deep.equal([
        `error [INVALID_INPUT]: ${line}`,
        `  see: rekindle ${argv[0]} --help`,
      ]);
    }
  });

  it("never prints the usage for a bad option", async function () {
    const { stderr } = await cli(["run", "--bogus"]);
    expect(stderr).to.not.include("families:").and.not.include("rekindle run [--provider");
  });

  it("an unknown command word names the valid ones and the closest, in one line", async function () {
    const top = await cli(["rnu"]);
    expect(top.code).to.equal(2);
    expect(lines(top.stderr)).to.have.length(2);
    expect(top.stderr).to.match(
      /^error \[INVALID_INPUT\]: unknown command "rnu"; valid: run, list, .*; did you mean run\?\n/,
    );
    expect(top.stderr).to.include("  see: rekindle --help\n");
    const sub = await cli(["sim", "stauts"]);
    expect(sub.code).to.equal(2);
    expect(lines(sub.stderr)).to.deep.equal([
      'error [INVALID_INPUT]: unknown sim command "stauts"; valid: build, up, status, down, node, apiserver; did you mean status?',
      "  see: rekindle sim --help",
    ]);
    const option = await cli(["--verison"]);
    expect(option.code).to.equal(2);
    expect(lines(option.stderr)).to.deep.equal([
      "error [INVALID_INPUT]: unknown option '--verison' (a command comes first); did you mean --version?",
      "  see: rekindle --help",
    ]);
    const help = await cli(["help", "sim", "stauts"]);
    expect(help.code).to.equal(2);
    expect(help.stderr).to.include("did you mean sim status?").and.include("see: rekindle --help");
  });
});

describe("an unknown value names the closest valid one", function () {
  this.timeout(60_000);

  it("a profile, a node verb, an -o format", async function () {
    expect(RekindleError.invalidInput("profile", "fsat", ["default", "fast"]).message).to.equal(
      'unknown profile "fsat"; valid: default, fast; did you mean fast?',
    );
    expect(RekindleError.invalidInput("profile", "slow", ["default", "fast"]).message).to.equal(
      'unknown profile "slow"; valid: default, fast',
    );
    // A description of what is valid, not a list: nothing to suggest.
    expect(RekindleError.invalidInput("--timeout", "0", "whole seconds").message).to.equal(
      'unknown --timeout "0"; valid: whole seconds',
    );
    const verb = await cli(["node", "stpo", "worker-1"]);
    expect(verb.code).to.equal(2);
    expect(verb.stderr).to.include(
      'unknown node verb "stpo"; valid: stop, start, partition, heal, pressure; did you mean stop?',
    );
    const format = await cli(["list", "-o", "jsno"]);
    expect(format.code).to.equal(2);
    expect(format.stderr).to.include("did you mean json?");
  });
});

describe("exit codes: one table", function () {
  this.timeout(60_000);

  it("lists each code once, and the help prints exactly its lines", async function () {
    expect(EXIT_CODE_TABLE.map((e) => e.code)).to.deep.equal([0, 1, 2, 3, 130]);
    for (const { name, code } of EXIT_CODE_TABLE) expect(EXIT_CODES[name]).to.equal(code);
    const { stdout } = await cli(["--help"]);
    expect(stdout).to.include(`exit codes:\n${exitCodeLines().join("\n")}\n`);
  });

  it("maps rekindle's errors by code", function () {
    const cases: [RekindleError, number][] = [
      [new RekindleError("INVALID_INPUT", "x"), 2],
      [new RekindleError("ABORTED", "x"), 130],
      [new RekindleError("UNREACHABLE", "no container engine answers (kind nodes are containers)"), 3],
      [
        new RekindleError(
          "HARNESS_FAILED",
          "no container engine here can run kind's privileged node containers",
        ),
        3,
      ],
      [new RekindleError("BOOT_FAILED", "x"), 3],
      [new RekindleError("TOOLCHAIN", "x"), 3],
      [new RekindleError("TIMEOUT", "x"), 1],
      [new RekindleError("PRECONDITION", "x"), 1],
    ];
    for (const [error, code] of cases) expect(exitCodeForError(error), error.code).to.equal(code);
  });

  it("an API error that says the cluster failed or refused us is 3; a refused request 1", function () {
    const api = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code, body: "", headers: {} });
    for (const code of [500, 503, 401, 403, 429])
      expect(exitCodeForError(api(code)), String(code)).to.equal(3);
    for (const code of [404, 409, 422]) expect(exitCodeForError(api(code)), String(code)).to.equal(1);
  });

  it("a connection that could not be made is 3 (fetch's error wraps the socket's); anything else 1", function () {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    expect(exitCodeForError(refused)).to.equal(3);
    expect(exitCodeForError(new TypeError("fetch failed", { cause: refused }))).to.equal(3);
    expect(exitCodeForError(new Error("boom"))).to.equal(1);
  });

  it("an API error from the cluster exits 3 through the CLI, in one line", async function () {
    const node = {
      metadata: { name: "w1", labels: {} },
      status: { conditions: [{ type: "Ready", status: "True" }] },
    };
    const api = await startFakeApiServer({
      "GET /api/v1/nodes": () => list("NodeList", [node]),
      "GET /api/v1/namespaces/rekindle-journal/configmaps": () =>
        status(503, "ServiceUnavailable", "etcd is down"),
    });
    try {
      const { code, stderr } = await cli([
        "down",
        "--provider",
        "existing",
        "--kubeconfig",
        api.kubeconfigPath,
      ]);
      expect(code).to.equal(3);
      expect(stderr).to.include("error [API]: HTTP 503 ServiceUnavailable: etcd is down\n");
    } finally {
      await api.close();
    }
  });
});
