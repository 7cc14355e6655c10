// Types of the local ESLint plugin tools/eslint-layers.js, for the TypeScript unit test.
import type { ESLint, Rule } from "eslint";

export interface Layer {
  name: string;
  /** Repository-relative folder prefixes ("lib/kube/") or files ("lib/errors.ts"). */
  paths: string[];
}

export const LAYERS: readonly Layer[];
export const KNOWN_EXCEPTIONS: ReadonlySet<string>;
export function layerOf(path: string): { index: number; name: string } | undefined;
/** Sets of folders of one layer that may not import each other (the two providers). */
export const SEPARATE_ROOMS: readonly (readonly string[])[];
export function roomOf(path: string): { set: number; folder: string } | undefined;
export const layersRule: Rule.RuleModule;
declare const plugin: ESLint.Plugin;
export default plugin;
