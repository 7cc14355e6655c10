// The hand-written docs stay small enough to read: every docs/*.md that is not generated is at most
// 30 KB and all of them together at most 160 KB (1 KB = 1000 bytes); the four job pages are at most
// 15 KB each and linked from the README. Every relative link in the README and the hand-written
// pages names a file that exists and, for a Markdown page, a heading it has.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { expect } from "chai";
import { PROJECT_ROOT } from "../../lib/util/project-files.js";

const DOCS = join(PROJECT_ROOT, "docs");

/**
 * Generated pages, never hand-edited, so not counted: `npm run docs` writes scenarios.md and
 * measurements.md (tools/docs/generate.ts).
 */
const GENERATED_PAGES = ["scenarios.md", "measurements.md"];

/** One page per job a user comes with, each linked from the README. */
const JOB_PAGES = ["gate-ci.md", "reproduce-an-incident.md", "regression-reports.md", "release-sign-off.md"];

const KB = 1000;
const PAGE_LIMIT = 30 * KB;
const TOTAL_LIMIT = 160 * KB;
const JOB_PAGE_LIMIT = 15 * KB;

function handWrittenPages(): string[] {
  return readdirSync(DOCS)
    .filter((name) => name.endsWith(".md") && !GENERATED_PAGES.includes(name))
    .sort();
}

function bytesOf(name: string): number {
  return statSync(join(DOCS, name)).size;
}

function kb(bytes: number): string {
  return `${(bytes / KB).toFixed(1)} KB`;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a Markdown page: its headings' slugs, repeats numbered as GitHub numbers them. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of withoutFences(readFileSync(file, "utf8")).split("\n")) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

function withoutFences(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "");
}

function withoutCode(text: string): string {
  return withoutFences(text).replace(/`[^`\n]*`/g, "");
}

/** Relative link targets of a Markdown file, as written. */
function relativeLinks(file: string): string[] {
  const links = [...withoutCode(readFileSync(file, "utf8")).matchAll(/\]\(([^)\s]+)\)/g)].map(
    (m) => m[1] ?? "",
  );
  return links.filter((link) => !/^[a-z]+:/i.test(link));
}

describe("docs: size and links", function () {
  it("every hand-written page is at most 30 KB, and all of them at most 160 KB", function () {
    const sizes = handWrittenPages().map((name) => [name, bytesOf(name)] as const);
    expect(sizes.length, "hand-written pages in docs/").to.be.greaterThan(0);
    const over = sizes
      .filter(([, bytes]) => bytes > PAGE_LIMIT)
      .map(([name, bytes]) => `docs/${name} ${kb(bytes)}`);
    expect(over, `pages over ${kb(PAGE_LIMIT)}`).to.deep.equal([]);
    const total = sizes.reduce((sum, [, bytes]) => sum + bytes, 0);
    const list = sizes.map(([name, bytes]) => `${name} ${kb(bytes)}`).join(", ");
    expect(
      total <= TOTAL_LIMIT,
      `hand-written pages ${kb(total)} in all, over ${kb(TOTAL_LIMIT)}: ${list}`,
    ).to.equal(true);
  });

  it("the generated pages named here exist, so nothing is left out by mistake", function () {
    for (const name of GENERATED_PAGES) expect(existsSync(join(DOCS, name)), `docs/${name}`).to.equal(true);
  });

  it("each job page is at most 15 KB and linked from the README", function () {
    const readme = readFileSync(join(PROJECT_ROOT, "README.md"), "utf8");
    for (const name of JOB_PAGES) {
      expect(existsSync(join(DOCS, name)), `docs/${name}`).to.equal(true);
      const bytes = bytesOf(name);
      expect(bytes <= JOB_PAGE_LIMIT, `docs/${name} is ${kb(bytes)}, over ${kb(JOB_PAGE_LIMIT)}`).to.equal(
        true,
      );
      expect(readme, `README.md links docs/${name}`).to.include(`](docs/${name})`);
    }
  });

  it("every relative link in the README and the hand-written pages names a file and heading that exist", function () {
    const files = [join(PROJECT_ROOT, "README.md"), ...handWrittenPages().map((name) => join(DOCS, name))];
    const broken: string[] = [];
    for (const file of files) {
      for (const link of relativeLinks(file)) {
        const [path = "", anchor] = link.split("#");
        const target = path === "" ? file : resolve(dirname(file), path);
        const where = `${relative(PROJECT_ROOT, file)}: ${link}`;
        if (!existsSync(target)) broken.push(`${where} (no such file)`);
        else if (anchor !== undefined && statSync(target).isFile() && target.endsWith(".md")) {
          if (!anchors(target).has(anchor)) broken.push(`${where} (no such heading)`);
        }
      }
    }
    expect(broken).to.deep.equal([]);
  });
});
