// `rekindle agent install|uninstall`: bad input exits 2 naming it, before any cluster is reached;
// a kubeconfig without the right to create the agent exits 2 quoting the API server's RBAC message;
// a cluster that does not answer exits 3.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { cli } from "../support/cli-capture.js";
import { startFakeApiServer, status } from "../support/fake-apiserver.js";

const FORBIDDEN =
  'namespaces "rekindle-agent" is forbidden: User "system:serviceaccount:default:nobody" cannot patch resource "namespaces" in API group "" in the namespace "rekindle-agent"';

describe("rekindle agent: bad input and refusals", function () {
  it("answers --help for the command and each subcommand", async function () {
    for (const [args, text] of [
      [["agent", "--help"], "rekindle agent install|uninstall"],
      [
        ["agent", "install", "--help"],
        "rekindle agent install [--kubeconfig K] [--context C] [--namespace N] [--image REF]",
      ],
      [["agent", "uninstall", "--help"], "rekindle agent uninstall [--kubeconfig K]"],
    ] as const) {
      const result = await cli([...args]);
      expect(result.code, args.join(" ")).to.equal(0);
      expect(result.stdout).to.contain(text);
    }
  });

  it("exits 2 on an argument, a bad --timeout or --namespace, and --image on uninstall", async function () {
    const cases: [string[], string][] = [
      [["agent", "install", "worker-1"], "rekindle agent install takes no arguments, got worker-1"],
      [["agent", "install", "--timeout", "0"], 'unknown --timeout "0"; valid: whole seconds from 1 to 3600'],
      [["agent", "install", "--namespace", "Not_A_Name"], "a DNS-1123 label"],
      [["agent", "install", "--image", ""], "an image reference"],
      [["agent", "uninstall", "--image", "x"], "rekindle agent uninstall takes no --image or --timeout"],
      [["agent", "install", "--kubeconfig", "/nonexistent/kubeconfig"], "/nonexistent/kubeconfig"],
    ];
    for (const [args, text] of cases) {
      const result = await cli(args);
      expect(result.code, args.join(" ")).to.equal(2);
      expect(result.stderr).to.contain(text);
    }
  });

  it("exits 2 quoting the RBAC message when the kubeconfig may not create the agent", async function () {
    const api = await startFakeApiServer({
      "GET /api/v1/namespaces/rekindle-agent": () =>
        status(404, "NotFound", 'namespaces "rekindle-agent" not found'),
      "GET /api/v1": () => ({
        body: {
          kind: "APIResourceList",
          groupVersion: "v1",
          resources: [{ name: "namespaces", namespaced: false, kind: "Namespace", verbs: ["patch", "get"] }],
        },
      }),
      "PATCH /api/v1/namespaces/rekindle-agent": () => status(403, "Forbidden", FORBIDDEN),
    });
    try {
      const result = await cli(["agent", "install", "--kubeconfig", api.kubeconfigPath, "--timeout", "5"]);
      expect(result.code, result.stderr).to.equal(2);
      expect(result.stderr).to.contain("this kubeconfig may not create the agent's objects");
      expect(result.stderr).to.contain('cannot patch resource "namespaces"');
      expect(api.requests.filter((r) => r.startsWith("PATCH"))).to.have.length(1);
    } finally {
      await api.close();
    }
  });

  it("exits 3 when the cluster does not answer", async function () {
    const dir = mkdtempSync(join(tmpdir(), "agent-cli-"));
    const path = join(dir, "kubeconfig");
    writeFileSync(
      path,
      `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "http://127.0.0.1:1" } }]
users: [{ name: u, user: {} }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`,
    );
    const result = await cli(["agent", "uninstall", "--kubeconfig", path]);
    expect(result.code, result.stderr).to.equal(3);
    expect(result.stderr).to.contain("cannot list the agent's requests in namespace rekindle-agent");
  });
});
