import { expect } from "chai";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  contextHash,
  dockerfileContextSources,
  linkTree,
  writeBuildContext,
} from "../../lib/cluster/kind/image/build-context.js";
import {
  controllerBuildArgs,
  INPUTS_LABEL,
  planControllerImage,
} from "../../lib/cluster/kind/image/controller-image.js";
import { findNpmDir, nodeBaseTag, type NodeBaseInputs } from "../../lib/cluster/kind/image/node-base.js";
import { npmCachePath, npmFillArgs } from "../../lib/cluster/kind/image/npm-cache.js";
import { RekindleError } from "../../lib/errors.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { securityContextRunArgs } from "../support/controller-securitycontext.js";
import { cli } from "../support/cli-capture.js";

function scratchDir(): string {
  return mkdtempSync(join(tmpdir(), "rekindle-ctl-image-"));
}

describe("controller image: the Dockerfile's build context", function () {
  it("takes from the context exactly what the repository's Dockerfile copies, npm's cache included", function () {
    const dockerfile = readFileSync(join(PROJECT_ROOT, "Dockerfile"), "utf8");
    expect(dockerfileContextSources(dockerfile)).to.deep.equal([
      "package.json",
      "package-lock.json",
      "tsconfig.json",
      "tsconfig.build.json",
      "docker/controller/package.json",
      "docker/npm-cache",
      "lib",
      "suites",
      "deploy",
      "bin",
    ]);
  });

  it("keeps the Dockerfile's default base pullable for online users and lets both stages take another", function () {
    const dockerfile = readFileSync(join(PROJECT_ROOT, "Dockerfile"), "utf8");
    const firstFrom = dockerfile.search(/^FROM /m);
    expect(dockerfile.slice(0, firstFrom)).to.match(/^ARG NODE_IMAGE=node:22-slim$/m);
    expect([...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1])).to.deep.equal([
      "${NODE_IMAGE}",
      "${NODE_IMAGE}",
    ]);
  });

  it("reads flags, JSON form and continuation lines; skips copies from stages", function () {
    const dockerfile = [
      "FROM x AS build",
      "COPY --chown=1000:1000 ./a/ b/",
      'COPY ["c d", "e", "/dst/"]',
      "ADD f \\",
      "    g /dst/",
      "COPY --from=build /src/dist dist",
      "COPY a /again/",
    ].join("\n");
    expect(dockerfileContextSources(dockerfile)).to.deep.equal(["a", "c d", "e", "f", "g"]);
  });

  it("refuses what a copied context could not hold: wildcards, variables, URLs, paths outside", function () {
    for (const line of [
      "COPY *.json ./",
      "COPY $SRC ./",
      "ADD https://example.org/x /x",
      "COPY /etc/passwd /x",
      "COPY ../x /x",
      "COPY . /x",
    ]) {
      expect(() => dockerfileContextSources(`FROM x\n${line}\n`), line)
        .to.throw(RekindleError)
        .with.property("code", "UNSUPPORTED");
    }
  });

  it("hashes names and contents: the same tree gives the same hash, any change another", function () {
    const dir = scratchDir();
    try {
      mkdirSync(join(dir, "lib"));
      writeFileSync(join(dir, "lib", "a.ts"), "one");
      writeFileSync(join(dir, "Dockerfile"), "FROM x");
      const first = contextHash(dir, ["Dockerfile", "lib"], ["NODE_IMAGE=a"]);
      expect(contextHash(dir, ["Dockerfile", "lib"], ["NODE_IMAGE=a"])).to.equal(first);
      expect(contextHash(dir, ["Dockerfile", "lib"], ["NODE_IMAGE=b"])).not.to.equal(first);
      writeFileSync(join(dir, "lib", "a.ts"), "two");
      expect(contextHash(dir, ["Dockerfile", "lib"], ["NODE_IMAGE=a"])).not.to.equal(first);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("writes the Dockerfile and the named paths only, and links a cache in without copying it", function () {
    const dir = scratchDir();
    try {
      const root = join(dir, "repo");
      mkdirSync(join(root, "lib"), { recursive: true });
      mkdirSync(join(root, "node_modules"));
      writeFileSync(join(root, "Dockerfile"), "FROM x\nCOPY lib lib\n");
      writeFileSync(join(root, "lib", "a.ts"), "a");
      const cache = join(dir, "cache", "_cacache", "index");
      mkdirSync(cache, { recursive: true });
      writeFileSync(join(cache, "entry"), "e");
      const context = join(dir, "context");
      writeBuildContext(root, ["lib"], context);
      linkTree(join(dir, "cache"), join(context, "docker", "npm-cache"));
      expect(readFileSync(join(context, "lib", "a.ts"), "utf8")).to.equal("a");
      expect(() => statSync(join(context, "node_modules"))).to.throw();
      const linked = join(context, "docker", "npm-cache", "_cacache", "index", "entry");
      expect(statSync(linked).ino).to.equal(statSync(join(cache, "entry")).ino);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("controller image: base, npm cache and build arguments", function () {
  const inputs: NodeBaseInputs = {
    suite: "bookworm",
    packages: ["libstdc++6", "libgcc-s1"],
    nodeVersion: "v20.20.2",
    nodeSha256: "a".repeat(64),
    npmVersion: "11.19.1",
  };

  it("tags the base with the Node.js version and a hash that follows every input", function () {
    expect(nodeBaseTag(inputs)).to.match(/^rekindle\/node-base:20\.20\.2-[0-9a-f]{10}$/);
    expect(nodeBaseTag({ ...inputs })).to.equal(nodeBaseTag(inputs));
    expect(nodeBaseTag({ ...inputs, nodeSha256: "b".repeat(64) })).not.to.equal(nodeBaseTag(inputs));
    expect(nodeBaseTag({ ...inputs, npmVersion: "11.19.2" })).not.to.equal(nodeBaseTag(inputs));
    expect(nodeBaseTag({ ...inputs, packages: ["libstdc++6"] })).not.to.equal(nodeBaseTag(inputs));
  });

  it("finds npm where Node.js installs it: <prefix>/lib/node_modules/npm beside <prefix>/bin/node", function () {
    const dir = scratchDir();
    try {
      const npm = join(dir, "lib", "node_modules", "npm");
      mkdirSync(npm, { recursive: true });
      mkdirSync(join(dir, "bin"));
      writeFileSync(join(npm, "package.json"), JSON.stringify({ name: "npm", version: "11.0.0" }));
      expect(findNpmDir(join(dir, "bin", "node"), { PATH: "" })).to.equal(npm);
      expect(findNpmDir(join(dir, "elsewhere", "bin", "node"), { PATH: "" })).to.equal(undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keys npm's cache on the lock file and fills it without running any script", function () {
    expect(npmCachePath("/c", "lock one")).to.match(/^\/c\/kind\/npm-cache-[0-9a-f]{10}$/);
    expect(npmCachePath("/c", "lock one")).not.to.equal(npmCachePath("/c", "lock two"));
    const runtime = { binary: "/usr/bin/node", version: "v20.20.2", npmDir: "/n/npm", npmVersion: "11.19.1" };
    const args = npmFillArgs(runtime, "/c/partial");
    expect(args.slice(0, 4)).to.deep.equal(["/n/npm/bin/npm-cli.js", "ci", "--cache", "/c/partial"]);
    expect(args).to.include("--ignore-scripts");
  });

  it("builds with no network, offline npm, the base as NODE_IMAGE and the inputs as a label", function () {
    const args = controllerBuildArgs(
      { tag: "rekindle:0.1.0", nodeImage: "rekindle/node-base:20.20.2-0123456789", inputs: "feed" },
      "/ctx",
    );
    expect(args[0]).to.equal("build");
    expect(args.join(" ")).to.include("--network none");
    expect(args.join(" ")).to.include("--tag rekindle:0.1.0");
    expect(args.join(" ")).to.include(`--label ${INPUTS_LABEL}=feed`);
    expect(args.join(" ")).to.include("--build-arg NODE_IMAGE=rekindle/node-base:20.20.2-0123456789");
    expect(args.join(" ")).to.include("--build-arg NPM_OFFLINE=true");
    expect(args.at(-1)).to.equal("/ctx");
  });

  it("plans rekindle:<package version>, the tag the Deployment names; another base is another input", async function () {
    const plan = await planControllerImage({ nodeImage: "node:22-slim" });
    const version = (
      JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string }
    ).version;
    expect(plan.tag).to.equal(`rekindle:${version}`);
    const deployment = readFileSync(join(PROJECT_ROOT, "deploy", "controller", "deployment.yaml"), "utf8");
    expect(deployment).to.include(`image: ${plan.tag}`);
    expect(plan.paths[0]).to.equal("Dockerfile");
    expect((await planControllerImage({ nodeImage: "node:22-bookworm-slim" })).inputs).not.to.equal(
      plan.inputs,
    );
  });
});

describe("controller image: the shipped securityContext as docker run flags", function () {
  it("reads deploy/controller/deployment.yaml into the smoke run's flags", function () {
    const deployment = readFileSync(join(PROJECT_ROOT, "deploy", "controller", "deployment.yaml"), "utf8");
    expect(securityContextRunArgs(deployment)).to.deep.equal([
      "--read-only",
      "--user",
      "1000:1000",
      "--cap-drop",
      "ALL",
      "--security-opt",
      "no-new-privileges",
      "--tmpfs",
      "/tmp:size=16m",
    ]);
  });
});

describe("CLI help the controller image answers", function () {
  // The first call loads the command's modules (tsx compiles them): seconds on a busy machine.
  this.timeout(30_000);

  it("rekindle controller --help prints the controller's usage and exits 0", async function () {
    const { code, stdout } = await cli(["controller", "--help"]);
    expect(code).to.equal(0);
    expect(stdout).to.include("rekindle controller [--kubeconfig K]");
  });

  it("rekindle kind help names build-controller-image", async function () {
    const { code, stdout } = await cli(["kind", "help"]);
    expect(code).to.equal(0);
    expect(stdout).to.include("build-controller-image [--check] [--force]");
  });
});
