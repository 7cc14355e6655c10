// A scenario is named steps; each undo is registered right after its fault and run in reverse.
// Steps are reported to Allure when running under its mocha reporter (no-ops otherwise).
import * as allure from "allure-js-commons";
import { toError } from "../errors.js";
import type { Progress } from "../util/progress.js";
import { silentProgress } from "../util/progress.js";

type Undo = { name: string; run: () => Promise<void> };

export class ScenarioSteps {
  readonly #undos: Undo[] = [];
  readonly #progress: Progress;
  readonly #label: string;

  constructor(label: string, progress: Progress = silentProgress) {
    this.#label = label;
    this.#progress = progress;
  }

  async step<T>(name: string, body: () => Promise<T>): Promise<T> {
    const phase = this.#progress.phase(`${this.#label}: ${name}`);
    try {
      const result = await allure.step(name, body);
      phase.end();
      return result;
    } catch (error) {
      phase.end("failed");
      throw error;
    }
  }

  /** Registers how to undo what was just done; undone in reverse order by `undoAll`. */
  registerUndo(name: string, run: () => Promise<void>): void {
    this.#undos.push({ name, run });
  }

  /** Runs every registered undo (newest first) even if some fail; throws the first failure after. */
  async undoAll(): Promise<void> {
    let first: unknown;
    while (this.#undos.length > 0) {
      const undo = this.#undos.pop();
      if (!undo) break;
      try {
        await this.step(`undo: ${undo.name}`, undo.run);
      } catch (error) {
        first ??= error;
      }
    }
    if (first !== undefined) throw toError(first);
  }
}
