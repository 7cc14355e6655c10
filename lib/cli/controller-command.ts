// `rekindle controller`: runs the recovery controller out-of-cluster (kubeconfig) or in-cluster.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { parse } from "yaml";
import {
  DEFAULT_CONTROLLER_CONFIG,
  parseDuration,
  parseMaxUnhealthy,
  type ControllerConfig,
} from "../controller/config.js";
import { RecoveryController } from "../controller/controller.js";
import { LeaderElector } from "../controller/leader.js";
import { fenceDriverRegistry, genericFenceDrivers } from "../controller/drivers/registry.js";
import type { FenceConfig } from "../controller/fence-config.js";
import { DockerFenceDriver } from "../cluster/kind/fence-driver.js";
import { RekindleError } from "../errors.js";
import { k8s } from "../kube/client.js";
import { parseCount } from "./args.js";

export const CONTROLLER_USAGE = `rekindle controller [--kubeconfig K] [--fence-config fence.yaml | --sim-cluster DIR]
                    [--unhealthy-after 20s] [--check-interval 1s] [--max-unhealthy 40%]
                    [--namespace rekindle-system] [--metrics-port 9464] [--power-on-after-fence] [--leader-elect]
      the recovery controller: detect → guard → fence → taint out-of-service → clean up → recover
      (in a pod, with no --kubeconfig, it uses the in-cluster service account)`;

function loadFenceConfig(path: string): FenceConfig {
  let parsed: unknown;
  try {
    parsed = parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new RekindleError("INVALID_INPUT", `cannot read fence config ${path}`, { cause: error });
  }
  const config = parsed as Partial<FenceConfig> | null;
  if (!config || typeof config.templates !== "object") {
    throw new RekindleError("INVALID_INPUT", `${path} has no "templates" map`, {
      hint: "templates: { name: { driver: sim|manual|webhook|redfish|fence-agent|docker, options: {...}, secretRef: { name } } }, defaultTemplate: name",
    });
  }
  return config as FenceConfig;
}

export async function controllerCommand(args: string[], signal: AbortSignal): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      kubeconfig: { type: "string" },
      "fence-config": { type: "string" },
      "sim-cluster": { type: "string" },
      "unhealthy-after": { type: "string" },
      "check-interval": { type: "string" },
      "max-unhealthy": { type: "string" },
      namespace: { type: "string" },
      "metrics-port": { type: "string", default: "9464" },
      "power-on-after-fence": { type: "boolean", default: false },
      "leader-elect": { type: "boolean", default: false },
    },
    strict: true,
  });
  const kc = new k8s.KubeConfig();
  if (values.kubeconfig) kc.loadFromFile(values.kubeconfig);
  else kc.loadFromDefault();
  if (values["max-unhealthy"] !== undefined) parseMaxUnhealthy(values["max-unhealthy"]);
  const config: ControllerConfig = {
    ...DEFAULT_CONTROLLER_CONFIG,
    identity: `${hostname()}-${process.pid}`,
    ...(values["unhealthy-after"]
      ? { unhealthyAfterMs: parseDuration("--unhealthy-after", values["unhealthy-after"]) }
      : {}),
    ...(values["check-interval"]
      ? { checkIntervalMs: parseDuration("--check-interval", values["check-interval"]) }
      : {}),
    ...(values["max-unhealthy"] ? { maxUnhealthy: values["max-unhealthy"] } : {}),
    ...(values.namespace ? { namespace: values.namespace } : {}),
    powerOnAfterFence: values["power-on-after-fence"],
  };
  // The generic drivers, then the providers' own (registered here, above the controller).
  const drivers = fenceDriverRegistry([
    ...genericFenceDrivers(kc),
    new DockerFenceDriver(),
    // Loaded only for a sim cluster: the sim runtime stays out of an in-cluster controller.
    ...(values["sim-cluster"]
      ? [new (await import("../cluster/sim/fence-driver.js")).SimFenceDriver(values["sim-cluster"])]
      : []),
  ]);
  const fenceConfig: FenceConfig = values["fence-config"]
    ? loadFenceConfig(values["fence-config"])
    : values["sim-cluster"]
      ? { templates: { sim: { driver: "sim" } }, defaultTemplate: "sim" }
      : (() => {
          throw new RekindleError("INVALID_INPUT", "no fence configuration", {
            hint: "pass --fence-config fence.yaml, or --sim-cluster DIR for a sim cluster",
          });
        })();
  const log = (m: string) => process.stderr.write(`${new Date().toISOString()} ${m}\n`);
  // Stopped (its loop ended, leadership released) however this function ends.
  await using controller = new RecoveryController({
    kc,
    config,
    fenceConfig,
    drivers,
    log,
    ...(values["leader-elect"]
      ? { leader: new LeaderElector({ kc, namespace: config.namespace, identity: config.identity, log }) }
      : {}),
  });
  const port = parseCount("--metrics-port", values["metrics-port"]);
  const { server, port: bound } = await controller.metrics.serve(
    port,
    process.env["KUBERNETES_SERVICE_HOST"] ? "0.0.0.0" : "127.0.0.1",
  );
  process.stderr.write(
    `rekindle controller ${config.identity}: unhealthyAfter ${config.unhealthyAfterMs} ms, maxUnhealthy ${config.maxUnhealthy}, drivers ${[...drivers.keys()].join(", ")}; metrics on :${bound}/metrics\n`,
  );
  try {
    controller.start();
    // Runs until Ctrl-C/SIGTERM, which the CLI turns into this signal's abort.
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      signal.addEventListener(
        "abort",
        () => {
          resolve();
        },
        { once: true },
      );
    });
  } finally {
    server.close();
  }
  return 0;
}
