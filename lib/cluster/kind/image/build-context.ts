// A Dockerfile's build context as a directory of its own: the Dockerfile and exactly the paths its
// COPY and ADD lines take from the context (so the Dockerfile stays the one list of them), with a
// hash of their contents that says whether an image built from them is out of date.
import { createHash, type Hash } from "node:crypto";
import {
  copyFileSync,
  cpSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
} from "node:fs";
import { dirname, join, relative } from "node:path";
import { RekindleError } from "../../../errors.js";

/**
 * The context paths of the Dockerfile's COPY and ADD lines, in order, once each ("./lib/" is
 * "lib"). Lines with --from copy from a stage and take none. Wildcards, variables, URLs and paths
 * outside the context are refused: a copied context could not hold what they mean.
 */
export function dockerfileContextSources(dockerfile: string): string[] {
  const sources: string[] = [];
  const lines = dockerfile.replace(/\\\r?\n/g, " ").split(/\r?\n/);
  for (const line of lines) {
    const match = /^\s*(COPY|ADD)\s+(.*)$/i.exec(line);
    if (!match) continue;
    let rest = (match[2] ?? "").trim();
    const flags: string[] = [];
    for (let flag = /^--\S+\s*/.exec(rest); flag; flag = /^--\S+\s*/.exec(rest)) {
      flags.push(flag[0].trim());
      rest = rest.slice(flag[0].length);
    }
    if (flags.some((f) => f.startsWith("--from="))) continue;
    const args = rest.startsWith("[") ? (JSON.parse(rest) as string[]) : rest.split(/\s+/);
    if (args.length < 2) throw unsupported(line, "it names no source");
    for (const source of args.slice(0, -1)) {
      if (/[*?[\]$]/.test(source) || /^[a-z]+:\/\//i.test(source) || source.startsWith("/"))
        throw unsupported(line, `${source}: wildcards, variables, URLs and absolute paths are not copied`);
      const path = source.replace(/^(\.\/)+/, "").replace(/\/+$/, "");
      if (path === "" || path === "." || path.split("/").includes(".."))
        throw unsupported(line, `${source}: only paths inside the context are copied, not all of it`);
      if (!sources.includes(path)) sources.push(path);
    }
  }
  return sources;
}

function unsupported(line: string, why: string): RekindleError {
  return new RekindleError(
    "UNSUPPORTED",
    `cannot make a build context for Dockerfile line "${line.trim()}": ${why}`,
    {
      hint: "name the files in COPY (lib/cluster/kind/image/build-context.ts copies exactly those)",
    },
  );
}

/** sha256 over the paths' names and contents (symlinks by target), plus `extra` strings. */
export function contextHash(root: string, paths: readonly string[], extra: readonly string[] = []): string {
  const hash = createHash("sha256");
  for (const text of extra) hash.update(`extra\0${text}\0`);
  for (const path of paths) hashPath(hash, root, path);
  return hash.digest("hex").slice(0, 16);
}

function hashPath(hash: Hash, root: string, path: string): void {
  const full = join(root, path);
  const stat = lstatSync(full);
  if (stat.isSymbolicLink()) {
    hash.update(`link\0${path}\0${readlinkSync(full)}\0`);
  } else if (stat.isDirectory()) {
    for (const name of readdirSync(full).sort()) hashPath(hash, root, `${path}/${name}`);
  } else {
    hash.update(`file\0${path}\0${stat.size}\0`);
    hash.update(readFileSync(full));
  }
}

/** Makes `contextDir` afresh: the Dockerfile and each source path, copied from `root`. */
export function writeBuildContext(root: string, sources: readonly string[], contextDir: string): void {
  rmSync(contextDir, { recursive: true, force: true });
  mkdirSync(contextDir, { recursive: true });
  copyFileSync(join(root, "Dockerfile"), join(contextDir, "Dockerfile"));
  for (const source of sources) {
    mkdirSync(dirname(join(contextDir, source)), { recursive: true });
    cpSync(join(root, source), join(contextDir, source), {
      recursive: true,
      verbatimSymlinks: true,
      preserveTimestamps: true,
    });
  }
}

/** Hard links every file of `from` into `to` (a large cache enters a context without a copy). */
export function linkTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true, recursive: true })) {
    const source = join(entry.parentPath, entry.name);
    const target = join(to, relative(from, source));
    if (entry.isDirectory()) mkdirSync(target, { recursive: true });
    else if (entry.isFile()) {
      mkdirSync(dirname(target), { recursive: true });
      try {
        linkSync(source, target);
      } catch (error) {
        // Another file system: copied after all.
        if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
        copyFileSync(source, target);
      }
    }
  }
}
