// Fencing on a cluster rekindle did not create (--fence-config FILE): the user's own fence
// configuration, in the controller's format (Redfish, fence agents, webhook), walled to the rails.
// - The recovery controller, in-process or deployed from deploy/controller/, may fence only the
//   nodes faults may hit: its --node-selector names them by their hostname label, and the driver
//   rekindle hands it refuses any other node before it reaches a BMC.
// - Reverting a fault on a node the controller powered off powers it on first (its agent runs on
//   it): poweredOn().
// - Deployed in the cluster, the controller gets the file as its rekindle-fencing ConfigMap, the
//   Secrets the templates name copied into its namespace, and the one CA file they name as its
//   rekindle-bmc-ca ConfigMap (the path rewritten to where deployment.yaml mounts it).
import { readFileSync } from "node:fs";
import { stringify } from "yaml";
import { errorMessage, RekindleError } from "../../errors.js";
import {
  fenceDriverFor,
  fenceDriverRegistry,
  genericFenceDrivers,
} from "../../controller/drivers/registry.js";
import { powerOnIfOff } from "../../controller/drivers/power-on.js";
import type { FenceDriver, FenceTarget, PowerState } from "../../controller/drivers/types.js";
import type { FenceConfig, FenceTemplate } from "../../controller/fence-config.js";
import { loadFenceConfig } from "../../controller/fence-config-parse.js";
import { checkFenceTargets } from "../../controller/fence-preflight.js";
import { HOSTNAME_LABEL, hostnameSelector } from "../../controller/node-selector.js";
import { DEFAULT_CONTROLLER_CONFIG } from "../../controller/config.js";
import { k8s } from "../../kube/client.js";
import { pollUntil } from "../../util/time.js";
import {
  caConfigMap,
  CONTROLLER_NAMESPACE,
  fencingConfigMap,
  MOUNTED_CA_FILE,
} from "../in-cluster-controller.js";
import type { FaultRails } from "../provider.js";

/** How long a node powered on again gets before its agent must answer (a server's POST and boot). Default 10 min. */
export const POWER_ON_BOOT_MS = 600_000;

export interface ExistingFencingOptions {
  kc: k8s.KubeConfig;
  /** --fence-config: the file. */
  path: string;
  rails: FaultRails;
  /** Where a template's secretRef without a namespace points. Default: the context's namespace, else "default". */
  secretNamespace?: string;
}

export interface ExistingFencing {
  readonly path: string;
  readonly fenceConfig: FenceConfig;
  /** The controller's --node-selector: the allowed nodes by hostname label. */
  readonly nodeSelector: string;
  /** Resolves each node's template and driver; refuses nodes off the rails. */
  readonly driver: FenceDriver;
  readonly secretNamespace: string;
  /** Powers `node` on when the driver reports it off, and waits `bootMs` for `ready` (its agent). */
  poweredOn(
    node: string,
    ready: () => Promise<boolean>,
    bootMs?: number,
  ): Promise<"powered-on" | "already-on">;
  /** The objects an in-cluster controller needs beside the fixtures (read now: Secrets, the CA). */
  userObjects(): Promise<k8s.KubernetesObject[]>;
}

/** The allowed nodes' hostname labels as a selector; refused when a node lacks it or another node shares it. */
function railsSelector(nodes: readonly k8s.V1Node[], rails: FaultRails): string {
  const allowed = nodes.filter((n) => rails.allowedNodes.includes(n.metadata?.name ?? ""));
  const differing = allowed.filter((n) => n.metadata?.labels?.[HOSTNAME_LABEL] !== n.metadata?.name);
  if (differing.length > 0)
    throw new RekindleError(
      "PRECONDITION",
      `--fence-config: the controller names the nodes it may fence by their ${HOSTNAME_LABEL} label, and ${differing.map((n) => n.metadata?.name ?? "").join(", ")} carry another value than their name`,
      {
        hint: "rekindle cannot wall the controller to those nodes: allow nodes whose hostname label is their name",
      },
    );
  return hostnameSelector(rails.allowedNodes);
}

/** A driver that resolves the node's own template and driver, for the allowed nodes only. */
class RailedFenceDriver implements FenceDriver {
  readonly name = "fence-config";
  readonly #resolve: (node: string) => Promise<{ driver: FenceDriver; target: FenceTarget }>;

  constructor(resolve: (node: string) => Promise<{ driver: FenceDriver; target: FenceTarget }>) {
    this.#resolve = resolve;
  }

  async powerOff(target: FenceTarget, signal?: AbortSignal): Promise<void> {
    const inner = await this.#resolve(target.node);
    await inner.driver.powerOff(inner.target, signal);
  }

  async powerOn(target: FenceTarget, signal?: AbortSignal): Promise<void> {
    const inner = await this.#resolve(target.node);
    if (inner.driver.powerOn === undefined)
      throw new RekindleError(
        "UNSUPPORTED",
        `fence driver ${inner.driver.name} cannot power ${target.node} on`,
      );
    await inner.driver.powerOn(inner.target, signal);
  }

  async powerState(target: FenceTarget, signal?: AbortSignal): Promise<PowerState> {
    const inner = await this.#resolve(target.node);
    return inner.driver.powerState(inner.target, signal);
  }
}

/** The one CA file the templates name (rewritten to the mounted path), or none; two are refused. */
function caFileOf(config: FenceConfig, path: string): string | undefined {
  const files = new Set(
    Object.values(config.templates)
      .map((t) => t.options?.["caFile"])
      .filter((f): f is string => f !== undefined),
  );
  if (files.size > 1)
    throw new RekindleError(
      "INVALID_INPUT",
      `--fence-config ${path}: its templates name ${files.size} CA files (${[...files].join(", ")}); the in-cluster controller mounts one (${MOUNTED_CA_FILE})`,
      { hint: "put the CAs into one PEM bundle and name it in every template" },
    );
  return [...files][0];
}

/** The configuration as the in-cluster controller reads it: the CA at its mount, Secrets in its namespace. */
function inClusterConfig(config: FenceConfig): FenceConfig {
  const templates: Record<string, FenceTemplate> = {};
  for (const [name, t] of Object.entries(config.templates)) {
    templates[name] = {
      driver: t.driver,
      ...(t.options
        ? {
            options: {
              ...t.options,
              ...(t.options["caFile"] !== undefined ? { caFile: MOUNTED_CA_FILE } : {}),
            },
          }
        : {}),
      ...(t.secretRef ? { secretRef: { name: t.secretRef.name } } : {}),
    };
  }
  return { ...config, templates };
}

/** The Secret `ref` names, as a copy in the controller's namespace. */
async function copiedSecret(
  kc: k8s.KubeConfig,
  ref: { name: string; namespace: string },
): Promise<k8s.KubernetesObject> {
  const secret = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret(ref);
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: ref.name, namespace: CONTROLLER_NAMESPACE },
    ...(secret.type ? { type: secret.type } : {}),
    data: secret.data ?? {},
  } as k8s.KubernetesObject;
}

/**
 * Loads and checks --fence-config against the cluster: the file's shape and drivers, every allowed
 * node's template, driver options and Secret (checkFenceTargets), the CA file. INVALID_INPUT or
 * PRECONDITION naming the file, before anything is applied.
 */
export async function loadExistingFencing(options: ExistingFencingOptions): Promise<ExistingFencing> {
  const { kc, path, rails } = options;
  const registry = fenceDriverRegistry(genericFenceDrivers(kc));
  const fenceConfig = loadFenceConfig(path, registry);
  const secretNamespace =
    options.secretNamespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? "default";
  const nodes = (await kc.makeApiClient(k8s.CoreV1Api).listNode()).items;
  const nodeSelector = railsSelector(nodes, rails);
  await checkFenceTargets({
    kc,
    fenceConfig,
    drivers: registry,
    namespace: secretNamespace,
    excludeLabel: DEFAULT_CONTROLLER_CONFIG.excludeLabel,
    nodeSelector,
  });
  const caFile = caFileOf(fenceConfig, path);
  const resolve = async (node: string) => {
    // The wall: the controller's selector already holds other nodes; this refuses them again.
    if (!rails.allowedNodes.includes(node))
      throw new RekindleError(
        "PRECONDITION",
        `refusing to fence ${node}: faults on this cluster are allowed only on ${rails.allowedNodes.join(", ")} (${rails.chosenBy})`,
      );
    return fenceDriverFor(registry, kc, fenceConfig, node, secretNamespace);
  };
  const driver = new RailedFenceDriver(resolve);
  return {
    path,
    fenceConfig,
    nodeSelector,
    driver,
    secretNamespace,
    async poweredOn(node, ready, bootMs = POWER_ON_BOOT_MS) {
      const outcome = await powerOnIfOff(driver, { node, options: {}, credentials: {} });
      if (outcome === "powered-on")
        await pollUntil(async () => ((await ready()) ? true : undefined), {
          what: `${node}, powered on through its fence driver, to run rekindle's agent again`,
          timeoutMs: bootMs,
          intervalMs: 2_000,
        });
      return outcome;
    },
    async userObjects() {
      let caPem = "";
      if (caFile !== undefined) {
        try {
          caPem = readFileSync(caFile, "utf8");
        } catch (error) {
          throw new RekindleError(
            "INVALID_INPUT",
            `--fence-config ${path}: cannot read its caFile ${caFile}: ${errorMessage(error)}`,
          );
        }
      }
      const refs = new Map<string, { name: string; namespace: string }>();
      for (const t of Object.values(fenceConfig.templates))
        if (t.secretRef)
          refs.set(t.secretRef.name, {
            name: t.secretRef.name,
            namespace: t.secretRef.namespace ?? secretNamespace,
          });
      return [
        ...(await Promise.all([...refs.values()].map((ref) => copiedSecret(kc, ref)))),
        caConfigMap(caPem),
        fencingConfigMap(stringify(inClusterConfig(fenceConfig))),
      ];
    },
  };
}
