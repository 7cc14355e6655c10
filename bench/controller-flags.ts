// The shipped controller at rest under several sets of Node/V8 flags, on one running sim cluster,
// rounds interleaved (drift over the run falls on every variant alike). What the Deployment's
// flags (deploy/controller/deployment.yaml) cost or save in CPU and RSS (issue 25 item 8: under
// 150 MB and under 2 % of a core at rest at 1000 nodes). Each variant runs alone, as
// bench:controller's shipped measurement does (bench/controller-shipped.ts), after a warm-up.
//
//   npx tsx bench/controller-flags.ts --sim-cluster DIR [--variants 'A|B|…'] [--runs 2]
//       [--seconds 120] [--warmup 30] [--out bench/results/F.json]
//
// A variant is a space-separated list of node flags; an empty one runs node without flags. The
// default compares the Deployment's flags, none, and each of the two alone.
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { SimCluster } from "../lib/cluster/sim/cluster.js";
import { RekindleError } from "../lib/errors.js";
import { PROJECT_ROOT } from "../lib/util/project-files.js";
import { parseCountIn } from "../lib/util/parse-count.js";
import { buildDist, measureShippedAtRest, type ShippedRest } from "./controller-shipped.js";
import { runBenchMain } from "./bench-main.js";
import { spreadOf } from "./calibration-rows.js";
import { benchProvenance } from "./provenance.js";
import { benchMachine, writeResultsFile } from "./results-file.js";

const DEFAULT_VARIANTS =
  "--max-semi-space-size=1 --optimize-for-size||--max-semi-space-size=1|--optimize-for-size";

function parseVariants(text: string): string[][] {
  const variants = text.split("|").map((v) => v.split(" ").filter((flag) => flag !== ""));
  const bad = variants.flat().filter((flag) => !flag.startsWith("--"));
  if (bad.length > 0) {
    throw RekindleError.invalidInput("--variants flag", bad[0] ?? "", [
      "node flags such as --optimize-for-size",
    ]);
  }
  return variants;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      "sim-cluster": { type: "string" },
      variants: { type: "string", default: DEFAULT_VARIANTS },
      runs: { type: "string", default: "2" },
      seconds: { type: "string", default: "120" },
      warmup: { type: "string", default: "30" },
      out: { type: "string" },
    },
    strict: true,
  });
  const root = values["sim-cluster"];
  if (root === undefined) {
    throw new RekindleError(
      "INVALID_INPUT",
      "--sim-cluster is required: the directory of a running sim cluster",
      {
        hint: "e.g. rekindle sim up --name floor --workers 1000 --zones 3 --profile large, then --sim-cluster ~/.local/state/rekindle/sim/floor",
      },
    );
  }
  const workers = SimCluster.open(root).nodeNames().length;
  const variants = parseVariants(values.variants);
  const runs = parseCountIn("--runs", values.runs, { min: 1, max: 10 });
  const seconds = parseCountIn("--seconds", values.seconds, { min: 10, max: 3600 });
  const warmup = parseCountIn("--warmup", values.warmup, { min: 5, max: 600 });
  const provenance = benchProvenance();
  const stop = new AbortController();
  process.once("SIGINT", () => {
    stop.abort(new Error("interrupted"));
  });
  const progress = (line: string) => {
    console.log(`[bench:controller-flags ${new Date().toISOString()}] ${line}`);
  };
  progress("building dist/ (the shipped controller is measured compiled)");
  await buildDist(stop.signal);
  // Kept when a controller fails (the error names it), removed after a run that ends well.
  const logFile = join(tmpdir(), `rekindle-controller-flags-${process.pid}.log`);
  const windows: ShippedRest[][] = variants.map(() => []);
  for (let run = 0; run < runs; run += 1) {
    for (const [index, flags] of variants.entries()) {
      const rest = await measureShippedAtRest({
        root,
        controllerArgs: [],
        nodeFlags: flags,
        warmupSeconds: warmup,
        restSeconds: seconds,
        logFile,
        signal: stop.signal,
        progress,
      });
      progress(
        `[${flags.join(" ") || "no flags"}] ${rest.cpuPercentOfOneCore} % of a core, RSS ${rest.rssMB} MB`,
      );
      windows[index]?.push(rest);
    }
  }
  const out = {
    ...provenance,
    machine: benchMachine(),
    workers,
    runs,
    secondsPerWindow: seconds,
    warmupSeconds: warmup,
    variants: variants.map((flags, index) => {
      const ws = windows[index] ?? [];
      return {
        flags: flags.join(" "),
        cpuPercentOfOneCore: ws.map((w) => w.cpuPercentOfOneCore),
        rssMB: ws.map((w) => w.rssMB),
        peakRssMB: ws.map((w) => w.peakRssMB),
        medianCpuPercentOfOneCore: Math.round(spreadOf(ws.map((w) => w.cpuPercentOfOneCore)).p50 * 100) / 100,
        medianRssMB: spreadOf(ws.map((w) => w.rssMB)).p50,
      };
    }),
    notes: [
      "Each window: `node FLAGS bin/rekindle.js controller --sim-cluster DIR` alone on a running sim cluster (no other controller), CPU and RSS of its process group from /proc after the warm-up; variants interleaved round by round.",
    ],
  };
  const file =
    values.out === undefined
      ? join(PROJECT_ROOT, "bench", "results", `controller-flags-${workers}w-${provenance.date}.json`)
      : resolve(values.out);
  await writeResultsFile(file, out);
  progress(`written to ${file}`);
  rmSync(logFile, { force: true });
}

await runBenchMain(main);
