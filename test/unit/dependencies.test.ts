// What rekindle loads is what it declares: every package its compiled modules import is a
// dependency (an install with --omit=dev runs every command), installing compiles with dependencies
// only, and the controller image holds the packages `rekindle controller` loads and nothing else.
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { DockerFenceDriver } from "../../lib/cluster/kind/fence-driver.js";
import { fenceDriverRegistry } from "../../lib/controller/drivers/registry.js";
import { parseFenceConfig } from "../../lib/controller/fence-config-parse.js";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { CONTROLLER_PACKAGE_JSON, controllerPackageJson } from "../support/controller-package.js";
import {
  controllerModules,
  importedPackages,
  moduleImports,
  packageName,
  shippedModules,
} from "../support/import-graph.js";

interface PackageJson {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}

function packageJson(path = "package.json"): PackageJson {
  return JSON.parse(readFileSync(join(PROJECT_ROOT, path), "utf8")) as PackageJson;
}

describe("dependencies: what rekindle loads, it declares", function () {
  const own = packageJson();

  it("reads package names from specifiers, scoped or not, with or without a subpath", function () {
    expect(packageName("mocha")).to.equal("mocha");
    expect(packageName("yaml/util")).to.equal("yaml");
    expect(packageName("@kubernetes/client-node")).to.equal("@kubernetes/client-node");
    expect(packageName("@scope/name/deep/path.js")).to.equal("@scope/name");
  });

  it("sees the run command's packages (mocha, allure) in what dist/ is compiled from", function () {
    const packages = importedPackages(shippedModules(), { lazy: true });
    expect(packages).to.include.members(["mocha", "allure-mocha", "allure-js-commons", "testcontainers"]);
    expect(packages).to.not.include("chai");
  });

  it("declares every package a shipped module imports, statically or by import(), as a dependency", function () {
    const undeclared = importedPackages(shippedModules(), { lazy: true }).filter(
      (name) => own.dependencies[name] === undefined,
    );
    expect(undeclared, "imported by lib/ or suites/ but not in dependencies").to.deep.equal([]);
    const both = Object.keys(own.dependencies).filter((name) => own.devDependencies[name] !== undefined);
    expect(both, "in both dependencies and devDependencies").to.deep.equal([]);
  });

  it("compiles on install (prepare) with the compiler alone: no type packages, no type check", function () {
    expect(own.scripts["prepare"]).to.equal("npm run build");
    expect(own.scripts["build"]).to.equal("tsc -p tsconfig.build.json");
    expect(own.dependencies).to.have.property("typescript");
    const text = readFileSync(join(PROJECT_ROOT, "tsconfig.build.json"), "utf8");
    const parsed = ts.parseConfigFileTextToJson("tsconfig.build.json", text);
    expect(parsed.error).to.equal(undefined);
    const options = (parsed.config as { compilerOptions: { types?: string[]; noCheck?: boolean } })
      .compilerOptions;
    expect(options.types).to.deep.equal([]);
    expect(options.noCheck).to.equal(true);
    // The type check happens elsewhere: in the typecheck script, over the same sources and more.
    expect(own.scripts["typecheck"]).to.equal("tsc -p tsconfig.json --noEmit");
  });
});

describe("dependencies: the controller image", function () {
  const own = packageJson();
  const image = packageJson(CONTROLLER_PACKAGE_JSON);

  it(`has a current ${CONTROLLER_PACKAGE_JSON} (regenerate: npx tsx test/support/controller-package.ts)`, function () {
    expect(readFileSync(join(PROJECT_ROOT, CONTROLLER_PACKAGE_JSON), "utf8")).to.equal(
      controllerPackageJson(),
    );
  });

  it("installs exactly the packages `rekindle controller` loads at start: no testcontainers, mocha or allure", function () {
    const loaded = importedPackages(controllerModules());
    expect(Object.keys(image.dependencies).sort()).to.deep.equal(loaded);
    for (const absent of ["testcontainers", "mocha", "allure-mocha", "allure-js-commons", "typescript"]) {
      expect(image.dependencies).to.not.have.property(absent);
    }
    expect(image).to.not.have.property("devDependencies");
    for (const [name, range] of Object.entries(image.dependencies)) {
      expect(range, name).to.equal(own.dependencies[name]);
    }
  });

  it("is pruned to that list by the Dockerfile's build stage", function () {
    const dockerfile = readFileSync(join(PROJECT_ROOT, "Dockerfile"), "utf8").replace(/\\\n\s*/g, "");
    expect(dockerfile).to.match(/^COPY docker\/controller\/package\.json controller-package\.json$/m);
    expect(dockerfile).to.match(
      /^RUN npm ci [^\n]*&& mv controller-package\.json package\.json && npm prune --omit=dev /m,
    );
    expect(dockerfile).to.match(/^COPY --from=build \/src\/package\.json \.\/$/m);
    expect(dockerfile).to.match(/^COPY --from=build \/src\/node_modules node_modules$/m);
  });

  it("loads testcontainers in the docker fence driver only when it fences, not at start", function () {
    const imports = moduleImports("lib/cluster/kind/fence-driver.ts");
    expect(imports.packages).to.not.include("testcontainers");
    expect(imports.lazyPackages).to.include("testcontainers");
  });

  it("refuses a docker template at start where testcontainers is not installed", function () {
    const config = { templates: { kind: { driver: "docker" } }, defaultTemplate: "kind" };
    const without = fenceDriverRegistry([new DockerFenceDriver(undefined, false)]);
    expect(() => parseFenceConfig(config, without, "fence.yaml")).to.throw(
      /templates\.kind: the docker driver needs the testcontainers package/,
    );
    const withIt = fenceDriverRegistry([new DockerFenceDriver(undefined, true)]);
    expect(parseFenceConfig(config, withIt, "fence.yaml").templates["kind"]?.driver).to.equal("docker");
    expect(
      new DockerFenceDriver().spec.checkTarget?.({ node: "n", options: {}, credentials: {} }),
    ).to.deep.equal([]);
  });
});
