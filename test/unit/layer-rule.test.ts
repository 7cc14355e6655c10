import { expect } from "chai";
import { Linter } from "eslint";
import tseslint from "typescript-eslint";
import layers, { KNOWN_EXCEPTIONS, layerOf, roomOf } from "../../tools/eslint-layers.js";

// A made-up checkout: the rule resolves imports by path only, the files need not exist.
const ROOT = "/repo";

function lint(file: string, code: string): Linter.LintMessage[] {
  const linter = new Linter({ cwd: ROOT });
  return linter.verify(
    code,
    [
      {
        files: ["**/*.ts"],
        languageOptions: { parser: tseslint.parser },
        plugins: { rekindle: layers },
        rules: { "rekindle/layers": ["error", { root: ROOT }] },
      },
    ],
    { filename: `${ROOT}/${file}` },
  );
}

describe("layer lint rule (tools/eslint-layers.js)", function () {
  it("reports an upward import, naming both files and both layers", function () {
    const messages = lint(
      "lib/controller/drivers/fixture.ts",
      'import { SimCluster } from "../../cluster/sim/cluster.js";\n',
    );
    expect(messages).to.have.length(1);
    const [message] = messages;
    expect(message!.ruleId).to.equal("rekindle/layers");
    expect(message!.message).to.contain("lib/controller/drivers/fixture.ts (layer controller)");
    expect(message!.message).to.contain("lib/cluster/sim/cluster.ts (layer cluster)");
  });

  it("accepts imports of the file's own layer and of lower layers", function () {
    const messages = lint(
      "lib/cluster/sim/fixture.ts",
      [
        'import { SimCluster } from "./cluster.js";',
        'import type { FenceDriver } from "../../controller/drivers/types.js";',
        'import { k8s } from "../../kube/client.js";',
        'import { RekindleError } from "../../errors.js";',
        'import { sleep } from "../../util/time.js";',
        'import { execa } from "execa";',
      ].join("\n"),
    );
    expect(messages).to.deep.equal([]);
  });

  it("also checks re-exports and dynamic imports", function () {
    const messages = lint(
      "lib/kube/fixture.ts",
      ['export * from "../controller/crd.js";', 'await import("../cluster/sim/fence-driver.js");'].join("\n"),
    );
    expect(messages.map((m) => m.line)).to.deep.equal([1, 2]);
  });

  it("reports type-only imports too: import type, export type … from, typeof import()", function () {
    // The model once took a scenario file's budget type from lib/scenario-file/types.ts, which the
    // table then placed at the bottom; the type lives in lib/expect/ now, and the file in its layer.
    const messages = lint(
      "lib/expect/budgets.ts",
      [
        'import type { BudgetSpec } from "../scenario-file/types.js";',
        'import { type ScenarioFile } from "../scenario-file/types.js";',
        'export type { ScenarioFile } from "../scenario-file/load.js";',
        'type Loader = typeof import("../scenario-file/load.js");',
        'type Spec = import("../scenario-file/types.js").BudgetSpec;',
      ].join("\n"),
    );
    expect(messages.map((m) => m.line)).to.deep.equal([1, 2, 3, 4, 5]);
    expect(messages[0]!.message).to.contain("lib/expect/budgets.ts (layer expect)");
    expect(messages[0]!.message).to.contain("lib/scenario-file/types.ts (layer scenario-file)");
    expect(layerOf("lib/scenario-file/types.ts")).to.deep.equal(layerOf("lib/scenario-file/load.ts"));
    expect(
      lint("lib/scenario-file/types.ts", 'import type { BudgetSpec } from "../expect/budget-spec.js";\n'),
    ).to.deep.equal([]);
  });

  it("reports the kind provider importing the sim provider, and the other way round", function () {
    const kindToSim = lint("lib/cluster/kind/image/fixture.ts", 'import { x } from "../../sim/state.js";\n');
    expect(kindToSim).to.have.length(1);
    expect(kindToSim[0]!.message).to.contain("(room lib/cluster/kind/)");
    expect(kindToSim[0]!.message).to.contain("lib/cluster/sim/state.ts (room lib/cluster/sim/)");
    const simToKind = lint("lib/cluster/sim/fixture.ts", 'export * from "../kind/cli.js";\n');
    expect(simToKind).to.have.length(1);
    expect(simToKind[0]!.message).to.contain("may not import each other");
    // What both use is in lib/build/, below them; the shared cluster files may import either.
    expect(
      lint("lib/cluster/kind/image/fixture.ts", 'import { x } from "../../../build/go-toolchain.js";\n'),
    ).to.deep.equal([]);
    expect(
      lint(
        "lib/cluster/create.ts",
        'import { x } from "./sim/cluster.js";\nimport { y } from "./kind/cluster.js";\n',
      ),
    ).to.deep.equal([]);
    expect(roomOf("lib/cluster/provider.ts")).to.equal(undefined);
  });

  it("keeps the Go build room below both providers, importing neither", function () {
    const build = layerOf("lib/build/go-toolchain.ts")!;
    expect(build.name).to.equal("build");
    expect(build.index).to.be.below(layerOf("lib/cluster/kind/cluster.ts")!.index);
    expect(build.index).to.be.below(layerOf("lib/cluster/sim/cluster.ts")!.index);
    expect(lint("lib/build/fixture.ts", 'import { x } from "../cluster/sim/versions.js";\n')).to.have.length(
      1,
    );
    expect(lint("lib/build/fixture.ts", 'import { x } from "../cluster/kind/cli.js";\n')).to.have.length(1);
    expect(lint("lib/build/fixture.ts", 'import { x } from "../util/paths.js";\n')).to.deep.equal([]);
  });

  it("lets test/ import anything and ignores files in no layer", function () {
    expect(lint("test/unit/fixture.ts", 'import { main } from "../../lib/cli/main.js";\n')).to.deep.equal([]);
    expect(lint("scripts/fixture.ts", 'import { x } from "../bench/provenance.js";\n')).to.deep.equal([]);
  });

  it("puts the docs generator (tools/) above the CLI it documents and below the tests that check it", function () {
    expect(lint("tools/docs/fixture.ts", 'import { x } from "../../lib/cli/catalogue.js";\n')).to.deep.equal(
      [],
    );
    expect(lint("test/unit/fixture.ts", 'import { x } from "../../tools/docs/pages.js";\n')).to.deep.equal(
      [],
    );
    expect(lint("tools/docs/fixture.ts", 'import { x } from "../../bench/provenance.js";\n')).to.have.length(
      1,
    );
    expect(lint("lib/cli/fixture.ts", 'import { x } from "../../tools/docs/pages.js";\n')).to.have.length(1);
  });

  it("has no known exceptions left, and reports a suite importing the runner", function () {
    // The suites used to be mocha files calling lib/run's defineHarnessSuite; now the runner
    // imports them, and the old shape is an upward import like any other.
    expect([...KNOWN_EXCEPTIONS]).to.deep.equal([]);
    expect(
      lint("suites/node-loss.ts", 'import { defineHarnessSuite } from "../lib/run/suite.js";\n'),
    ).to.have.length(1);
    expect(lint("lib/run/suite.ts", 'import { SCENARIOS } from "../../suites/index.js";\n')).to.deep.equal(
      [],
    );
  });

  it("places files by the table, lowest first", function () {
    const order = [
      "lib/errors.ts",
      "lib/build/build-cache.ts",
      "lib/kube/client.ts",
      "lib/controller/controller.ts",
      "lib/cluster/kind/fence-driver.ts",
      "lib/expect/model.ts",
      "lib/report/summary.ts",
      "lib/scenario/harness.ts",
      "suites/node-loss.ts",
      "lib/run/runner.ts",
      "lib/cli/main.ts",
      "tools/docs/pages.ts",
      "test/unit/cli.test.ts",
    ].map((path) => layerOf(path)!.index);
    expect(order).to.deep.equal([...order].sort((a, b) => a - b));
    expect(layerOf("lib/util/time.ts")).to.deep.equal(layerOf("lib/errors.ts"));
    expect(layerOf("lib/observe/recorder.ts")).to.deep.equal(layerOf("lib/workloads/deploy.ts"));
    expect(layerOf("deploy/controller/crd.yaml")).to.equal(undefined);
  });
});
