// The rules of rekindle's own test layers: nothing focused, nothing pending, a missing prerequisite
// fails unless REKINDLE_ALLOW_SKIP=1 says skipping is wanted, and the gate and the full run are
// the commands the README and .ci/run name.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { ALLOW_SKIP_VARIABLE, requirePrerequisite } from "../support/prerequisites.js";

const require = createRequire(import.meta.url);
const LAYERS = ["unit", "integration", "full"] as const;

interface MochaSettings {
  spec: string[];
  "forbid-only": boolean;
  "forbid-pending": boolean;
}

/** Sets or (undefined) removes an environment variable. */
function setEnv(name: string, value: string | undefined): void {
  if (value === undefined) Reflect.deleteProperty(process.env, name);
  else process.env[name] = value;
}

/** A layer's mocha settings as mocha would load them now, with REKINDLE_ALLOW_SKIP as given. */
function settings(layer: (typeof LAYERS)[number], allowSkip: string | undefined): MochaSettings {
  const saved = process.env[ALLOW_SKIP_VARIABLE];
  setEnv(ALLOW_SKIP_VARIABLE, allowSkip);
  try {
    const file = join(PROJECT_ROOT, `.mocharc.${layer}.cjs`);
    for (const key of Object.keys(require.cache))
      if (key.includes("mocha")) Reflect.deleteProperty(require.cache, key);
    return require(file) as MochaSettings;
  } finally {
    setEnv(ALLOW_SKIP_VARIABLE, saved);
  }
}

/** A mocha context stand-in that records whether the test skipped itself. */
function fakeContext(): { context: Mocha.Context; skipped: () => boolean } {
  let skipped = false;
  const context = {
    test: undefined,
    skip() {
      skipped = true;
      throw new Error("skipped");
    },
  } as unknown as Mocha.Context;
  return { context, skipped: () => skipped };
}

describe("rekindle's test layers", function () {
  for (const layer of LAYERS) {
    it(`${layer}: forbids focused and pending tests unless ${ALLOW_SKIP_VARIABLE}=1`, function () {
      const strict = settings(layer, undefined);
      expect(strict["forbid-only"]).to.equal(true);
      expect(strict["forbid-pending"]).to.equal(true);
      expect(settings(layer, "true")["forbid-pending"], "only the value 1 allows skips").to.equal(true);
      expect(settings(layer, "1")["forbid-pending"]).to.equal(false);
      expect(settings(layer, "1")["forbid-only"]).to.equal(true);
    });
  }

  it("the gate and the full run take disjoint test folders", function () {
    expect(settings("integration", undefined).spec).to.deep.equal(["test/integration/**/*.test.ts"]);
    expect(settings("full", undefined).spec).to.deep.equal(["test/full/**/*.test.ts"]);
  });

  it("a missing prerequisite fails, naming it and the variable, whatever CI says", function () {
    const saved = { ci: process.env["CI"], allow: process.env[ALLOW_SKIP_VARIABLE] };
    try {
      setEnv(ALLOW_SKIP_VARIABLE, undefined);
      for (const ci of ["true", "false"]) {
        process.env["CI"] = ci;
        const { context, skipped } = fakeContext();
        expect(() => {
          requirePrerequisite(context, "no /bin/busybox");
        }).to.throw(`missing prerequisite: no /bin/busybox (set ${ALLOW_SKIP_VARIABLE}=1`);
        expect(skipped()).to.equal(false);
      }
      process.env[ALLOW_SKIP_VARIABLE] = "1";
      const { context, skipped } = fakeContext();
      expect(() => {
        requirePrerequisite(context, "no /bin/busybox");
      }).to.throw("skipped");
      expect(skipped()).to.equal(true);
      const present = fakeContext();
      requirePrerequisite(present.context, undefined);
      expect(present.skipped()).to.equal(false);
    } finally {
      // The skip above recorded its reason for the closing lines; it was this test's own.
      (globalThis as { rekindleSkipReasons?: string[] }).rekindleSkipReasons?.pop();
      for (const [name, value] of [
        ["CI", saved.ci],
        [ALLOW_SKIP_VARIABLE, saved.allow],
      ] as const)
        setEnv(name, value);
    }
  });

  it("npm test is the gate, npm run test:full adds test/full, and .ci/run calls npm test", function () {
    const scripts = (
      JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    expect(scripts["test"]).to.equal("bash scripts/test.sh");
    expect(scripts["test:full"]).to.equal("bash scripts/test.sh --full");
    expect(scripts["test:slow"]).to.include("mocha --config .mocharc.full.cjs");
    const ci = readFileSync(join(PROJECT_ROOT, ".ci", "run"), "utf8");
    expect(ci).to.match(/^npm test$/m);
    const gate = readFileSync(join(PROJECT_ROOT, "scripts", "test.sh"), "utf8");
    expect(gate).to.include("stages=(typecheck lint test:unit test:integration)");
    expect(gate).to.include("--full) stages+=(test:slow)");
  });
});
