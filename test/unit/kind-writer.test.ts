import { expect } from "chai";
import { copyFileSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WRITER_SOURCES, writerBuildPlan } from "../../lib/cluster/kind/writer/build.js";
import { writerImageTag } from "../../lib/cluster/kind/writer/image.js";
import { deployPath } from "../../lib/util/project-files.js";

describe("the writer workload's build", function () {
  it("builds our standard-library-only module at a hash of its sources, tests left out", function () {
    const plan = writerBuildPlan();
    expect(plan.component).to.equal("writer");
    expect(plan.cacheGroup).to.equal("kind");
    expect(plan.packages).to.deep.equal(["rekindle.dev/writer"]);
    expect(plan.binaries).to.deep.equal(["writer"]);
    expect(plan.version).to.match(/^src-[0-9a-f]{10}$/);

    const copy = mkdtempSync(join(tmpdir(), "writer-src-"));
    for (const file of readdirSync(WRITER_SOURCES))
      copyFileSync(join(WRITER_SOURCES, file), join(copy, file));
    expect(writerBuildPlan(copy).version).to.equal(plan.version);
    writeFileSync(join(copy, "more_test.go"), "package main\n");
    expect(writerBuildPlan(copy).version, "a test is no build input").to.equal(plan.version);
    writeFileSync(join(copy, "more.go"), "package main\n");
    expect(writerBuildPlan(copy).version, "a source is").not.to.equal(plan.version);
  });

  it("copies only the build inputs into the work directory", async function () {
    const work = mkdtempSync(join(tmpdir(), "writer-work-"));
    await writerBuildPlan().prepare({ command: "go", version: "1.26.0" }, work, {});
    expect(readdirSync(work).sort()).to.deep.equal(["go.mod", "main.go", "record.go"]);
  });

  it("tags the image by the source hash, and lives outside deploy/kind (the node image's recipe)", function () {
    expect(writerImageTag("src-0123456789")).to.equal("docker.io/rekindle/writer:src-0123456789");
    expect(WRITER_SOURCES.startsWith(deployPath("kind"))).to.equal(false);
  });
});
