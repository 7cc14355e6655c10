// `rekindle version` (and `--version`, `-V`): which rekindle this is and the versions it pins.
import { parseOptions } from "../util/parse-options.js";
import { PINNED_KIND_VERSION } from "../build/kind-binary.js";
import { PINNED_SIM_VERSIONS } from "../build/versions.js";
import { rekindleBuildInfo, type BuildInfo } from "../util/build-info.js";
import { OUTPUT_OPTION, OUTPUT_USAGE, outputFormat, writeJson } from "./args.js";

export const VERSION_USAGE = `rekindle version ${OUTPUT_USAGE}   (also rekindle --version, rekindle -V)
      rekindle's version and git sha (from its checkout; "unknown" in an install without one), and
      the pinned Kubernetes, etcd, KWOK and kind versions`;

export interface VersionReport {
  rekindle: BuildInfo;
  /** The Kubernetes the sim builds and rekindle's offline kind node image carries. */
  kubernetes: string;
  /** The sim's etcd. */
  etcd: string;
  kwok: string;
  /** The kind release rekindle installs and tests with. */
  kind: string;
  node: string;
}

export async function versionReport(): Promise<VersionReport> {
  return {
    rekindle: await rekindleBuildInfo(),
    kubernetes: PINNED_SIM_VERSIONS.kubernetes,
    etcd: PINNED_SIM_VERSIONS.etcd,
    kwok: PINNED_SIM_VERSIONS.kwok,
    kind: PINNED_KIND_VERSION,
    node: process.version,
  };
}

function describeGit(info: BuildInfo): string {
  if (info.gitSha === "unknown") return "unknown (not a git checkout)";
  return `${info.gitSha}${info.dirty === true ? " (dirty: tracked files changed)" : ""}`;
}

export async function versionCommand(args: string[]): Promise<number> {
  const { values } = parseOptions({ args, options: OUTPUT_OPTION, strict: true });
  const format = outputFormat(values.output);
  const report = await versionReport();
  if (format === "json") {
    writeJson(report);
    return 0;
  }
  const rows: [string, string][] = [
    ["git sha", describeGit(report.rekindle)],
    ["kubernetes", `${report.kubernetes} (sim; rekindle's kind node image)`],
    ["etcd", `${report.etcd} (sim)`],
    ["kwok", `${report.kwok} (sim)`],
    ["kind", report.kind],
    ["node.js", report.node],
  ];
  process.stdout.write(
    `rekindle ${report.rekindle.version}\n${rows.map(([k, v]) => `  ${k.padEnd(11)} ${v}`).join("\n")}\n`,
  );
  return 0;
}
