// The in-cluster controller runs `rekindle controller` from the image: what that command loads at
// start is what the image needs. It must not reach the sim runtime, the suites, the scenario
// harness or the report writers (they came along when the controller imported a cluster provider).
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";

/** Relative modules a file loads when it is evaluated: value imports and re-exports, not `import type` nor `import()`. */
function staticImports(file: string): string[] {
  const source = readFileSync(file, "utf8");
  const statements = source.matchAll(/^(import|export)\s+(?!type\s)([\s\S]*?)\s+from\s+"(\.[^"]+)";/gm);
  return [...statements]
    .map((m) => m[3] ?? "")
    .map((specifier) => join(dirname(file), specifier.replace(/\.js$/, ".ts")));
}

function loadedAtStart(entry: string): Set<string> {
  const seen = new Set<string>();
  const pending = [entry];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    pending.push(...staticImports(file));
  }
  return new Set([...seen].map((f) => relative(PROJECT_ROOT, f)));
}

describe("the controller command's import graph", function () {
  const main = loadedAtStart(join(PROJECT_ROOT, "lib/cli/main.ts"));
  const controller = loadedAtStart(join(PROJECT_ROOT, "lib/cli/controller-command.ts"));

  it("loads the controller, its generic drivers and the docker driver", function () {
    expect([...controller]).to.include.members([
      "lib/controller/controller.ts",
      "lib/controller/drivers/redfish.ts",
      "lib/cluster/kind/fence-driver.ts",
    ]);
  });

  it("reaches no sim runtime, suite, scenario harness or report writer", function () {
    const strays = [...controller, ...main].filter((f) =>
      /^(lib\/cluster\/sim\/|suites\/|lib\/scenario\/|lib\/report\/|lib\/run\/)/.test(f),
    );
    expect(strays).to.deep.equal([]);
  });

  it("can tell: the run command does reach them", function () {
    const run = loadedAtStart(join(PROJECT_ROOT, "lib/cli/run-commands.ts"));
    expect([...run]).to.include.members(["lib/cluster/sim/cluster.ts", "suites/index.ts"]);
  });
});
