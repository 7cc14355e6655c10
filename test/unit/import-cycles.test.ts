// No two files of lib/, suites/, tools/ or bench/ import each other, directly or round a longer loop, type
// imports included: a cycle through `import type` still ties two files together (neither can be
// read, moved or split without the other). What both need belongs in a leaf module of its own.
// The cycle finder is proven on small graphs, and the reader on files that name each other only
// by `import type`, `export … from` and `import("…")`.
import { expect } from "chai";
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { cyclicComponents, formatCycle, importCycles, type FileGraph } from "../support/import-cycles.js";
import { fileGraph, fileImports, moduleImports } from "../support/import-graph.js";

function graph(edges: Record<string, string[]>): FileGraph {
  return new Map(Object.entries(edges));
}

/** A checkout of its own under the unit layer's temporary directory, holding `files`. */
function checkout(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "import-cycles-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, dirname(path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("import cycles", function () {
  it("lib/, suites/, tools/ and bench/ have none, type imports included", function () {
    const files = fileGraph(["lib", "suites", "tools", "bench"]);
    expect(files.size).to.be.above(300);
    expect(files.get("lib/scenario/harness.ts")).to.include("lib/scenario/harness-types.ts");
    const cycles = importCycles(files).map(formatCycle);
    expect(cycles, "import cycles: move what both ends need into a leaf module of its own").to.deep.equal([]);
  });

  describe("the cycle finder", function () {
    it("finds a two-file cycle, and a longer one, each once from its least file", function () {
      const cycles = importCycles(
        graph({
          "a.ts": ["b.ts", "leaf.ts"],
          "b.ts": ["a.ts"],
          "c.ts": ["a.ts"],
          "x.ts": ["y.ts"],
          "y.ts": ["z.ts"],
          "z.ts": ["x.ts", "leaf.ts"],
          "leaf.ts": [],
        }),
      );
      expect(cycles.map(formatCycle)).to.deep.equal(["a.ts → b.ts → a.ts", "x.ts → y.ts → z.ts → x.ts"]);
    });

    it("names every file of a tangle: the shortest cycle through each", function () {
      // harness ↔ context, harness → timeline → base → harness: one component of four files.
      const tangle = graph({
        "harness.ts": ["context.ts", "timeline.ts"],
        "context.ts": ["harness.ts"],
        "timeline.ts": ["base.ts"],
        "base.ts": ["harness.ts"],
      });
      expect(cyclicComponents(tangle)).to.deep.equal([
        ["base.ts", "context.ts", "harness.ts", "timeline.ts"],
      ]);
      expect(importCycles(tangle).map(formatCycle)).to.deep.equal([
        "base.ts → harness.ts → timeline.ts → base.ts",
        "context.ts → harness.ts → context.ts",
      ]);
    });

    it("reports a file importing itself, and nothing in a graph without cycles", function () {
      expect(importCycles(graph({ "a.ts": ["a.ts"] })).map(formatCycle)).to.deep.equal(["a.ts → a.ts"]);
      const acyclic = graph({ "a.ts": ["b.ts", "c.ts"], "b.ts": ["c.ts"], "c.ts": [] });
      expect(importCycles(acyclic)).to.deep.equal([]);
      expect(cyclicComponents(acyclic)).to.deep.equal([]);
    });
  });

  describe("the reader", function () {
    it("counts import type, export … from and import(), but not a comment or a string", function () {
      const root = checkout({
        "lib/a.ts": [
          "// import { c } from './c.js';",
          'import type { B } from "./sub/b.js";',
          "const text = \"import('./c.js')\";",
          "export const a: B | string = text;",
        ].join("\n"),
        "lib/sub/b.ts": 'export type { C as B } from "../c.js";\n',
        "lib/c.ts": 'export type C = typeof import("./a.js");\n',
        "lib/leaf.ts": 'import { type C } from "./c.js";\nexport type L = C;\n',
      });
      expect(fileImports("lib/a.ts", root)).to.deep.equal(["lib/sub/b.ts"]);
      expect(importCycles(fileGraph(["lib"], root)).map(formatCycle)).to.deep.equal([
        "lib/a.ts → lib/sub/b.ts → lib/c.ts → lib/a.ts",
      ]);
      // The dependency tests' reader still skips `import type`: it loads nothing.
      expect(moduleImports("lib/a.ts", root).local).to.deep.equal([]);
    });
  });
});
