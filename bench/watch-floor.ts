// The floor under the recovery controller's CPU at rest (issue 25 item 8): what it costs a node
// process only to receive the node Leases' watch, with the controller's own watch reader
// (lib/kube/watch-stream.ts: HTTPS, line splitting, JSON.parse) and nothing else. At 1000 nodes
// every kubelet renews every 10 s: about 100 small events a second, each its own chunk. Compared
// with the shipped controller's CPU at rest (bench:controller), the rest is the controller's own.
// Runs against a cluster that is up, e.g. `rekindle up --provider sim --workers 1000 --profile large`.
//
//   npx tsx bench/watch-floor.ts --kubeconfig K [--seconds 60] [--warmup 15] [--runs 3]
//       [--machine TEXT] [--out bench/results/F.json]
import { writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { RekindleError } from "../lib/errors.js";
import { loadKubeConfig } from "../lib/kube/client.js";
import { openWatch } from "../lib/kube/watch-stream.js";
import { parseCountIn } from "../lib/util/parse-count.js";
import { sleep } from "../lib/util/time.js";
import { startWindow } from "./process-window.js";
import { benchProvenance } from "./provenance.js";

const LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";

interface Window {
  seconds: number;
  eventsPerSecond: number;
  cpuPercentOfOneCore: number;
}

/** The process's CPU (% of one core, process-window.ts) and the events received over `seconds`. */
async function window(seconds: number, events: () => number, signal: AbortSignal): Promise<Window> {
  const n0 = events();
  const usage = startWindow();
  await sleep(seconds * 1000, signal);
  const { seconds: elapsed, cpuPercentOfOneCore } = usage.stop();
  return {
    seconds: elapsed,
    eventsPerSecond: Math.round(((events() - n0) / elapsed) * 100) / 100,
    cpuPercentOfOneCore,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: "string" },
      seconds: { type: "string", default: "60" },
      warmup: { type: "string", default: "15" },
      runs: { type: "string", default: "3" },
      machine: { type: "string" },
      out: { type: "string" },
    },
  });
  if (values.kubeconfig === undefined) {
    throw new RekindleError(
      "INVALID_INPUT",
      "--kubeconfig is required: the kubeconfig of a running cluster",
      {
        hint: "e.g. rekindle up --provider sim --workers 1000 --profile large prints one",
      },
    );
  }
  const seconds = parseCountIn("--seconds", values.seconds, { min: 1, max: 3600 });
  const warmup = parseCountIn("--warmup", values.warmup, { min: 1, max: 600 });
  const runs = parseCountIn("--runs", values.runs, { min: 1, max: 20 });
  const provenance = benchProvenance();
  const kc = loadKubeConfig(values.kubeconfig);
  const stop = new AbortController();
  process.once("SIGINT", () => {
    stop.abort(new Error("interrupted"));
  });
  const idle: Window[] = [];
  const watching: Window[] = [];
  // Idle first: the process's own cost with nothing arriving (timers, the runtime).
  for (let i = 0; i < runs; i += 1) idle.push(await window(seconds, () => 0, stop.signal));
  let events = 0;
  const opened = await openWatch(kc, LEASES, { allowWatchBookmarks: "true" }, stop.signal, (line) => {
    if (line.type !== "BOOKMARK") events += 1;
  });
  opened.ended.catch(() => undefined);
  await sleep(warmup * 1000, stop.signal);
  for (let i = 0; i < runs; i += 1) watching.push(await window(seconds, () => events, stop.signal));
  stop.abort(new Error("done"));
  const out = {
    ...provenance,
    machine: {
      cores: cpus().length,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      ...(values.machine ? { what: values.machine } : {}),
    },
    runs,
    secondsPerWindow: seconds,
    idle,
    leaseWatch: watching,
  };
  const line = (w: Window) => `${w.cpuPercentOfOneCore} % of a core, ${w.eventsPerSecond} events/s`;
  console.log(`idle: ${idle.map(line).join("; ")}`);
  console.log(`the Lease watch: ${watching.map(line).join("; ")}`);
  if (values.out) {
    writeFileSync(resolve(values.out), `${JSON.stringify(out, null, 2)}\n`);
    console.log(`written to ${values.out}`);
  }
}

await main();
