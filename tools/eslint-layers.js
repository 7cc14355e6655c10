// ESLint rule "rekindle/layers": a file may import only its own layer or a lower one, so no import
// cycle between layers (such as cluster ↔ controller) can come back; and the rooms of one layer
// listed in SEPARATE_ROOMS (the kind and sim providers) do not import each other. Every relative
// import, re-export and dynamic import() of a TypeScript file under lib/, suites/, tools/, bench/ or
// test/ is resolved and both ends are placed in the table below, type-only ones too (`import type`,
// `export type … from`, `typeof import("…")`): a type import ties two layers together as much as a
// value import. Files in no layer (deploy/, scripts/, node_modules) are not checked.
import { dirname, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root: this file lives in <root>/tools/. */
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The layers, lowest first: a file may import its own layer or any layer before it. Several
 * folders on one row form one layer (they may import each other). A new top-level folder under
 * lib/ belongs in this table, or its imports go unchecked.
 */
export const LAYERS = [
  { name: "base", paths: ["lib/errors.ts", "lib/util/"] },
  // The Go build machinery (toolchain, wrapper modules, build cache, pinned versions): below both
  // providers, so the kind node image and the sim's binaries share it without kind importing the sim.
  { name: "build", paths: ["lib/build/"] },
  { name: "kube", paths: ["lib/kube/"] },
  { name: "controller", paths: ["lib/controller/"] },
  // The cluster providers own their fence drivers, written against the controller's interface.
  { name: "cluster", paths: ["lib/cluster/"] },
  // rekindle's node agent (lib/agent/): the DaemonSet's program and the capability objects the
  // existing provider gets from it; above the provider types, below the fault layer's reap.
  { name: "agent", paths: ["lib/agent/"] },
  // Faults as handles over the providers' capabilities, journalled in the cluster (lib/fault/):
  // above the providers it reconnects to for `rekindle reap`, below the scenarios that inject.
  { name: "fault", paths: ["lib/fault/"] },
  { name: "workloads/observe", paths: ["lib/workloads/", "lib/observe/"] },
  { name: "expect", paths: ["lib/expect/"] },
  { name: "report", paths: ["lib/report/"] },
  { name: "scenario", paths: ["lib/scenario/"] },
  { name: "suites", paths: ["suites/"] },
  // Scenario files (rekindle run -f): loaded and checked from the layers below, run by lib/run/.
  { name: "scenario-file", paths: ["lib/scenario-file/"] },
  { name: "run", paths: ["lib/run/"] },
  { name: "cli", paths: ["lib/cli/"] },
  // The project's own tools (the docs generator, tools/docs/): on top of everything they document.
  { name: "tools", paths: ["tools/"] },
  { name: "bench/test", paths: ["bench/", "test/"] },
];

/**
 * Upward imports tolerated today, as "importer -> target" (repository-relative .ts paths), each
 * with the reason it is not fixed yet. Empty is the goal: remove an entry once its import is gone.
 */
export const KNOWN_EXCEPTIONS = new Set([]);

/**
 * Rooms of one layer that must not import each other, as sets of folders: a provider is built on
 * the layers below it, never on another provider (what they share belongs in a lower layer).
 */
export const SEPARATE_ROOMS = [["lib/cluster/kind/", "lib/cluster/sim/"]];

/** The room of `path` among SEPARATE_ROOMS (its set's index and folder), or undefined. */
export function roomOf(path) {
  for (const [index, rooms] of SEPARATE_ROOMS.entries()) {
    const room = rooms.find((folder) => path.startsWith(folder));
    if (room !== undefined) return { set: index, folder: room };
  }
  return undefined;
}

/** "lib/kube/x.js" → "lib/kube/x.ts": imports name the emitted file, the table the source. */
function sourcePath(path) {
  return path.replace(/\.js$/, ".ts");
}

/** The layer (index and name) a repository-relative path belongs to, or undefined. */
export function layerOf(path) {
  const index = LAYERS.findIndex((layer) =>
    layer.paths.some((prefix) => (prefix.endsWith("/") ? path.startsWith(prefix) : path === prefix)),
  );
  return index < 0 ? undefined : { index, name: LAYERS[index].name };
}

function repoPath(root, absolute) {
  return sourcePath(relative(root, absolute).split(sep).join("/"));
}

/** @type {import("eslint").Rule.RuleModule} */
export const layersRule = {
  meta: {
    type: "problem",
    docs: {
      description: "a file imports only its own layer or a lower one (table in tools/eslint-layers.js)",
    },
    schema: [
      {
        type: "object",
        properties: { root: { type: "string" } },
        additionalProperties: false,
      },
    ],
    messages: {
      upward:
        "{{importer}} (layer {{importerLayer}}) imports {{target}} (layer {{targetLayer}}), a higher layer; " +
        "a file may import only its own layer or a lower one (table in tools/eslint-layers.js)",
      sibling:
        "{{importer}} (room {{importerRoom}}) imports {{target}} (room {{targetRoom}}): these rooms may not " +
        "import each other; move what they share to a lower layer (SEPARATE_ROOMS in tools/eslint-layers.js)",
    },
  },
  create(context) {
    const root = context.options[0]?.root ?? REPO_ROOT;
    const importer = repoPath(root, context.filename);
    const importerLayer = layerOf(importer);
    if (!importerLayer) return {};

    function check(sourceNode) {
      if (sourceNode?.type !== "Literal" || typeof sourceNode.value !== "string") return;
      const specifier = sourceNode.value;
      if (!specifier.startsWith("./") && !specifier.startsWith("../")) return;
      const target = repoPath(root, resolve(dirname(context.filename), specifier));
      const targetLayer = layerOf(target);
      if (!targetLayer) return;
      const importerRoom = roomOf(importer);
      const targetRoom = roomOf(target);
      if (
        importerRoom &&
        targetRoom &&
        importerRoom.set === targetRoom.set &&
        importerRoom.folder !== targetRoom.folder
      ) {
        context.report({
          node: sourceNode,
          messageId: "sibling",
          data: { importer, importerRoom: importerRoom.folder, target, targetRoom: targetRoom.folder },
        });
        return;
      }
      if (targetLayer.index <= importerLayer.index) return;
      if (KNOWN_EXCEPTIONS.has(`${importer} -> ${target}`)) return;
      context.report({
        node: sourceNode,
        messageId: "upward",
        data: { importer, importerLayer: importerLayer.name, target, targetLayer: targetLayer.name },
      });
    }

    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
      // `typeof import("…")` in a type (typescript-eslint: `source`; `argument` before it).
      TSImportType: (node) => check(node.source ?? node.argument?.literal),
    };
  },
};

/** The local plugin eslint.config.js loads: `rekindle/layers`. */
export default { meta: { name: "rekindle" }, rules: { layers: layersRule } };
