// What every results file of bench/results/ shares: the machine it ran on, and JSON formatted as
// the repository's lint formats it (a new file passes `npm run lint` as written).
import { writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { format, resolveConfig } from "prettier";

export function benchMachine(): { cores: number; memoryGiB: number; node: string } {
  return { cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
}

export async function writeResultsFile(file: string, result: unknown): Promise<void> {
  writeFileSync(
    file,
    await format(JSON.stringify(result, null, 2), { ...(await resolveConfig(file)), parser: "json" }),
  );
}
