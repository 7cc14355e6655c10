// The controller image's package.json (docker/controller/package.json): rekindle's name, version and
// module type, with only the packages `rekindle controller` loads at start, at the ranges rekindle's
// own package.json gives them. The Dockerfile prunes the image's node_modules to it.
// `npx tsx test/support/controller-package.ts` writes it; a unit test checks it is current.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";
import { controllerModules, importedPackages } from "./import-graph.js";

/** Where the Dockerfile takes it from, relative to the repository. */
export const CONTROLLER_PACKAGE_JSON = "docker/controller/package.json";

interface PackageJson {
  name: string;
  version: string;
  description?: string;
  type?: string;
  license?: string;
  engines?: Record<string, string>;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
}

/** The file's text as it should be, from the sources and package.json under `root`. */
export function controllerPackageJson(root = PROJECT_ROOT): string {
  const own = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as PackageJson;
  const dependencies: Record<string, string> = {};
  for (const name of importedPackages(controllerModules(root), { root })) {
    const range = own.dependencies?.[name];
    if (range === undefined) throw new Error(`the controller imports ${name}, which is not a dependency`);
    dependencies[name] = range;
  }
  const image = {
    name: own.name,
    version: own.version,
    description: "rekindle's recovery controller image: the packages `rekindle controller` loads, no more",
    type: own.type,
    license: own.license,
    private: true,
    engines: own.engines,
    bin: own.bin,
    dependencies,
  };
  return `${JSON.stringify(image, null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(join(PROJECT_ROOT, CONTROLLER_PACKAGE_JSON), controllerPackageJson());
  process.stdout.write(`wrote ${CONTROLLER_PACKAGE_JSON}\n`);
}
