// The Allure HTML report of a run's allure-results/, with the previous run's history carried over.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { carryAllureHistory, previousAllureHistory, resolveAllureHistory } from "../report/allure-history.js";
import { runCommand } from "../util/command.js";
import { PROJECT_ROOT } from "../util/project-files.js";
import type { Progress } from "../util/progress.js";

/** allure-commandline needs Java; without it the raw allure-results stay and a note says why. */
export async function generateAllureHtml(
  reportDir: string,
  progress: Progress,
  historyFrom: string | undefined,
): Promise<void> {
  const history =
    historyFrom !== undefined ? resolveAllureHistory(historyFrom) : previousAllureHistory(reportDir);
  if (history !== undefined && carryAllureHistory(history, reportDir) !== undefined)
    progress.info(`Allure history carried over from ${history}`);
  const allure = join(PROJECT_ROOT, "node_modules", ".bin", "allure");
  if (!existsSync(allure)) {
    progress.info(
      "allure-commandline is not installed: skipping the HTML report (allure-results/ is written)",
    );
    return;
  }
  const phase = progress.phase("generating the Allure HTML report");
  try {
    await runCommand(
      allure,
      ["generate", join(reportDir, "allure-results"), "-o", join(reportDir, "allure-report"), "--clean"],
      { timeoutMs: 180_000 },
    );
    phase.end(join(reportDir, "allure-report", "index.html"));
  } catch (error) {
    phase.end(`skipped: ${error instanceof Error ? error.message : String(error)} (is Java installed?)`);
  }
}
