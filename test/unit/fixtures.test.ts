import { expect } from "chai";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseManifests, substitute } from "../../lib/kube/apply.js";
import { fixturePath } from "../../lib/util/fixtures.js";

const SUBSTITUTIONS = {
  NAMESPACE: "ns",
  REPLICAS: "2",
  CSI_DRIVER: "sim.csi.rekindle.dev",
  KUBELET_VERSION: "v1.34.4",
  KWOK_VERSION: "v0.8.0",
  POD_START_MS: "1000",
  ATTACH_MS: "500",
  NODE: "worker-1",
  STORAGE_CLASS: "rekindle-sim",
};

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? yamlFiles(join(dir, entry.name))
      : entry.name.endsWith(".yaml")
        ? [join(dir, entry.name)]
        : [],
  );
}

describe("fixtures", function () {
  const files = yamlFiles(fixturePath());

  it("exist", function () {
    expect(files.length).to.be.greaterThan(4);
  });

  for (const file of files) {
    it(`${file.slice(fixturePath().length + 1)} parses with every placeholder filled`, function () {
      const text = substitute(readFileSync(file, "utf8"), SUBSTITUTIONS);
      expect(text).to.not.match(/@[A-Z_]+@/);
      const objects = parseManifests(text, file);
      expect(objects.length).to.be.greaterThan(0);
    });
  }

  it("kwok stages name their resource's apiGroup explicitly (kwok does not default it when read from --config)", function () {
    for (const file of files.filter((f) => f.includes(join("sim", "kwok")))) {
      for (const stage of parseManifests(substitute(readFileSync(file, "utf8"), SUBSTITUTIONS), file)) {
        const spec = (stage as { spec?: { resourceRef?: { apiGroup?: string }; selector?: unknown } }).spec;
        expect(spec?.resourceRef?.apiGroup, `${file}: ${stage.metadata?.name ?? ""}`).to.be.a("string").and
          .not.empty;
        // kwok silently drops a Stage without a selector.
        expect(spec?.selector, `${file}: ${stage.metadata?.name ?? ""}`).to.be.an("object");
      }
    }
  });
});
