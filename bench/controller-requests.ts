// The recovery controller's cost at rest (issue 25 items 1 and 8): the API requests and response
// bytes per second it causes, its CPU and RSS, on a running cluster whose nodes all renew. The
// controller runs in this process; every HTTP(S) request the process sends is counted (node's
// http.request and https.request are wrapped: client-node's fetch and the watch caches both go
// through them). With --base-lib it alternates with another checkout's controller (lib/ of an
// earlier commit), so both see the same cluster and machine.
//
//   npx tsx bench/controller-requests.ts --kubeconfig K [--base-lib DIR] [--runs 3] [--warmup 15]
//       [--seconds 60] [--check-interval 1s] [--machine TEXT] [--out bench/results/F.json]
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { loadKubeConfig } from "../lib/kube/client.js";
import { installNodeFenceCrd, nodeFenceCrdServed } from "../lib/controller/crd.js";
import { parseDurationMs } from "../lib/util/duration.js";
import { PROJECT_ROOT } from "../lib/util/project-files.js";
import { benchProvenance } from "./provenance.js";
import { measureRest } from "./process-window.js";
import { installRequestCounter } from "./request-counter.js";

const counter = installRequestCounter();

interface Measurement {
  controller: "base" | "this";
  seconds: number;
  requestsPerSecond: number;
  listsAndGetsPerSecond: number;
  watchesPerSecond: number;
  bytesPerSecond: number;
  cpuPercentOfOneCore: number;
  rssMB: number;
  requests: Record<string, number>;
}

async function measure(libDir: string, label: "base" | "this", options: Options): Promise<Measurement> {
  type ControllerModule = typeof import("../lib/controller/controller.js");
  type ConfigModule = typeof import("../lib/controller/config.js");
  type RegistryModule = typeof import("../lib/controller/drivers/registry.js");
  const { RecoveryController } = (await import(
    join(libDir, "controller", "controller.js")
  )) as ControllerModule;
  const { DEFAULT_CONTROLLER_CONFIG } = (await import(
    join(libDir, "controller", "config.js")
  )) as ConfigModule;
  const { fenceDriverRegistry } = (await import(
    join(libDir, "controller", "drivers", "registry.js")
  )) as RegistryModule;
  const controller = new RecoveryController({
    kc: loadKubeConfig(options.kubeconfig),
    config: {
      ...DEFAULT_CONTROLLER_CONFIG,
      identity: `bench-${label}`,
      checkIntervalMs: options.checkIntervalMs,
    },
    // No template: nothing can be fenced (the cluster is at rest anyway).
    fenceConfig: { templates: {} },
    drivers: fenceDriverRegistry([]),
  });
  controller.start();
  try {
    await new Promise((r) => setTimeout(r, options.warmupMs));
    const rest = await measureRest(counter, options.seconds);
    const { WATCH: watches, LIST: lists, GET: gets, WRITE: writes } = rest.requestsPerSecond;
    const round = (n: number) => Math.round(n * 100) / 100;
    return {
      controller: label,
      seconds: rest.seconds,
      requestsPerSecond: round(watches + lists + gets + writes),
      listsAndGetsPerSecond: round(lists + gets),
      watchesPerSecond: watches,
      bytesPerSecond: rest.bytesPerSecond,
      cpuPercentOfOneCore: rest.cpuPercentOfOneCore,
      rssMB: rest.rssMB,
      requests: rest.requests,
    };
  } finally {
    await controller.stop();
  }
}

interface Options {
  kubeconfig: string;
  baseLib: string | undefined;
  runs: number;
  warmupMs: number;
  seconds: number;
  checkIntervalMs: number;
  machine: string;
  out: string | undefined;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: "string" },
      "base-lib": { type: "string" },
      runs: { type: "string", default: "3" },
      warmup: { type: "string", default: "15" },
      seconds: { type: "string", default: "60" },
      "check-interval": { type: "string", default: "1s" },
      machine: { type: "string", default: "" },
      out: { type: "string" },
    },
    strict: true,
  });
  if (!values.kubeconfig)
    throw new Error("--kubeconfig K is required (a running cluster, e.g. rekindle up's)");
  return {
    kubeconfig: values.kubeconfig,
    baseLib: values["base-lib"] ? resolve(values["base-lib"]) : undefined,
    runs: Number(values.runs),
    warmupMs: Number(values.warmup) * 1000,
    seconds: Number(values.seconds),
    checkIntervalMs: parseDurationMs(values["check-interval"], "--check-interval"),
    machine: values.machine,
    out: values.out,
  };
}

const opts = options();
const provenance = benchProvenance();
const kc = loadKubeConfig(opts.kubeconfig);
if (!(await nodeFenceCrdServed(kc))) await installNodeFenceCrd(kc);
const nodes = (await kc.makeApiClient((await import("../lib/kube/client.js")).k8s.CoreV1Api).listNode()).items
  .length;
const measurements: Measurement[] = [];
for (let run = 0; run < opts.runs; run++) {
  if (opts.baseLib) {
    measurements.push(await measure(opts.baseLib, "base", opts));
    console.log(JSON.stringify(measurements.at(-1)));
  }
  measurements.push(await measure(join(PROJECT_ROOT, "lib"), "this", opts));
  console.log(JSON.stringify(measurements.at(-1)));
}
const result = {
  ...provenance,
  machine: opts.machine,
  runs: opts.runs,
  nodes,
  checkIntervalMs: opts.checkIntervalMs,
  warmupSeconds: opts.warmupMs / 1000,
  measurements,
};
if (opts.out) writeFileSync(opts.out, `${JSON.stringify(result, null, 2)}\n`);
else console.log(JSON.stringify(result, null, 2));
