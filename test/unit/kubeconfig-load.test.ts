// Which kubeconfig a command talks to: an explicit file alone; $KUBECONFIG's files merged as kubectl
// merges them (first file wins per name, current-context from the first that sets one); a context
// picked by name; bad input named.
import { expect } from "chai";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { stringify } from "yaml";
import { loadKubeconfig, mergeKubeconfigs } from "../../lib/kube/kubeconfig-load.js";
import { RekindleError } from "../../lib/errors.js";
import { cli, expectExit } from "../support/cli-capture.js";

interface FileSpec {
  clusters: [name: string, server: string, ca?: string][];
  users: [name: string, token: string][];
  contexts: [name: string, cluster: string, user: string][];
  current?: string;
}

/** Writes the kubeconfig `spec` describes to `path`. */
function writeKubeconfig(path: string, spec: FileSpec): void {
  writeFileSync(path, kubeconfigText(spec));
}

/** The first file of the merge tests: one cluster, user and context, all also in the second. */
const FIRST: FileSpec = {
  clusters: [["shared", "https://first.example:6443"]],
  users: [["shared-user", "first-token"]],
  contexts: [["shared-ctx", "shared", "shared-user"]],
};

function kubeconfigText(spec: FileSpec): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: spec.clusters.map(([name, server, ca]) => ({
      name,
      cluster: { server, ...(ca !== undefined ? { "certificate-authority": ca } : {}) },
    })),
    users: spec.users.map(([name, token]) => ({ name, user: { token } })),
    contexts: spec.contexts.map(([name, cluster, user]) => ({ name, context: { cluster, user } })),
    ...(spec.current !== undefined ? { "current-context": spec.current } : {}),
  });
}

function expectInvalidInput(run: () => unknown, message: string): void {
  try {
    run();
  } catch (error) {
    expect(error).to.be.instanceOf(RekindleError);
    expect((error as RekindleError).code).to.equal("INVALID_INPUT");
    expect((error as RekindleError).message).to.include(message);
    return;
  }
  expect.fail(`expected INVALID_INPUT: ${message}`);
}

describe("kubeconfig loading (kubectl's rules)", function () {
  let dir: string;
  let first: string;
  let second: string;

  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), "rekindle-kubeconfig-"));
    mkdirSync(join(dir, "b"));
    first = join(dir, "a.yaml");
    second = join(dir, "b", "config");
    // The first file has no current-context: the second's applies.
    writeKubeconfig(first, FIRST);
    writeKubeconfig(second, {
      clusters: [
        ["shared", "https://second.example:6443"],
        ["own", "https://own.example:6443", "ca.pem"],
      ],
      users: [
        ["shared-user", "second-token"],
        ["own-user", "own-token"],
      ],
      contexts: [
        ["shared-ctx", "own", "own-user"],
        ["own-ctx", "own", "own-user"],
      ],
      current: "own-ctx",
    });
  });

  afterEach(function () {
    rmSync(dir, { recursive: true, force: true });
  });

  it("merges every file KUBECONFIG lists: the first file wins each name, current-context from the first that sets one", function () {
    const env = { KUBECONFIG: [first, "", second].join(delimiter) };
    const { kc, source } = loadKubeconfig({ env });
    expect(source).to.equal([first, second].join(delimiter));
    expect(kc.getClusters().map((c) => [c.name, c.server])).to.deep.equal([
      ["shared", "https://first.example:6443"],
      ["own", "https://own.example:6443"],
    ]);
    expect(kc.getUsers().map((u) => [u.name, u.token])).to.deep.equal([
      ["shared-user", "first-token"],
      ["own-user", "own-token"],
    ]);
    expect(kc.getContexts().map((c) => [c.name, c.cluster])).to.deep.equal([
      ["shared-ctx", "shared"],
      ["own-ctx", "own"],
    ]);
    expect(kc.getCurrentContext()).to.equal("own-ctx");
    // A relative certificate path is its own file's, not the first file's, directory.
    expect(kc.getCluster("own")?.caFile).to.equal(join(dir, "b", "ca.pem"));
  });

  it("takes the first current-context in order: swapping the files swaps which names win", function () {
    writeKubeconfig(first, { ...FIRST, current: "shared-ctx" });
    const { kc } = loadKubeconfig({ env: { KUBECONFIG: [second, first].join(delimiter) } });
    expect(kc.getCurrentContext()).to.equal("own-ctx");
    expect(kc.getCluster("shared")?.server).to.equal("https://second.example:6443");
    expect(kc.getContextObject("shared-ctx")?.cluster).to.equal("own");
  });

  it("skips listed files that do not exist, and fails naming them when none does", function () {
    const missing = join(dir, "missing.yaml");
    const { kc } = loadKubeconfig({ env: { KUBECONFIG: [missing, second].join(delimiter) } });
    expect(kc.getCurrentContext()).to.equal("own-ctx");
    expectInvalidInput(
      () => loadKubeconfig({ env: { KUBECONFIG: missing } }),
      `none of the files KUBECONFIG lists exists (${missing})`,
    );
  });

  it("uses an explicit file alone, never merged with KUBECONFIG's", function () {
    const { kc, source } = loadKubeconfig({ path: first, env: { KUBECONFIG: second } });
    expect(source).to.equal(first);
    expect(kc.getContexts().map((c) => c.name)).to.deep.equal(["shared-ctx"]);
    expectInvalidInput(
      () => loadKubeconfig({ path: join(dir, "nope") }),
      `kubeconfig ${join(dir, "nope")} does not exist`,
    );
  });

  it("switches to the context asked for, and names the valid ones for any other", function () {
    const env = { KUBECONFIG: [first, second].join(delimiter) };
    const { kc } = loadKubeconfig({ env, context: "shared-ctx" });
    expect(kc.getCurrentContext()).to.equal("shared-ctx");
    expect(kc.getCurrentCluster()?.server).to.equal("https://first.example:6443");
    expectInvalidInput(
      () => loadKubeconfig({ env, context: "prod" }),
      'unknown context "prod"; valid: shared-ctx, own-ctx',
    );
  });

  it("merges no files into an empty configuration", function () {
    const kc = mergeKubeconfigs([]);
    expect(kc.getContexts()).to.deep.equal([]);
  });
});

describe("rekindle controller --context", function () {
  it("refuses a context the kubeconfig does not have, naming the valid ones, before anything starts", async function () {
    const dir = mkdtempSync(join(tmpdir(), "rekindle-kubeconfig-"));
    const file = join(dir, "config");
    writeKubeconfig(file, {
      clusters: [["c", "https://127.0.0.1:1"]],
      users: [["u", "t"]],
      contexts: [["only-ctx", "c", "u"]],
      current: "only-ctx",
    });
    try {
      const argv = ["controller", "--kubeconfig", file, "--context", "elsewhere", "--fence-config", "/x"];
      expectExit(await cli(argv), 2, 'unknown context "elsewhere"; valid: only-ctx');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
