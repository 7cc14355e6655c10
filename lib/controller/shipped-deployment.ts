// How deploy/controller/deployment.yaml configures the controller: its container's args, read
// from the manifest users apply and parsed by the controller's own flag parser, so a timeline
// expected of the in-cluster controller follows the manifest (today --unhealthy-after 20s).
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { RekindleError } from "../errors.js";
import { deployPath } from "../util/project-files.js";
import type { ControllerConfig } from "./config.js";
import { controllerSettings, parseControllerFlags } from "./flags.js";

export const SHIPPED_DEPLOYMENT_FILE = deployPath("controller", "deployment.yaml");
const DEPLOYMENT_NAME = "rekindle-controller";
const CONTAINER_NAME = "controller";

export interface ShippedControllerSettings {
  /** The container's image reference. */
  image: string;
  /** The args after the `controller` command. */
  args: string[];
  config: ControllerConfig;
  leaderElect: boolean;
  replicas: number;
  /**
   * The Node/V8 flags the container's command gives node before the script (the flags that keep
   * its memory small); [] when it runs the image's entrypoint.
   */
  nodeFlags: string[];
}

interface DeploymentShape {
  kind?: unknown;
  metadata?: { name?: unknown };
  spec?: {
    replicas?: unknown;
    template?: {
      spec?: {
        containers?: {
          name?: unknown;
          image?: unknown;
          args?: unknown;
          command?: unknown;
        }[];
      };
    };
  };
}

/** The flags of a `[node, ...flags, script]` command; [] for any other command or none. */
function nodeFlagsOf(command: unknown): string[] {
  if (!Array.isArray(command) || command[0] !== "node") return [];
  return command.slice(1).filter((part): part is string => typeof part === "string" && part.startsWith("--"));
}

/** The controller's settings as the shipped Deployment (or `text`, a manifest like it) runs it. */
export function shippedControllerSettings(
  text: string = readFileSync(SHIPPED_DEPLOYMENT_FILE, "utf8"),
  file = SHIPPED_DEPLOYMENT_FILE,
): ShippedControllerSettings {
  const deployment = parseAllDocuments(text)
    .map((doc) => doc.toJS() as DeploymentShape | null)
    .find((doc) => doc?.kind === "Deployment" && doc.metadata?.name === DEPLOYMENT_NAME);
  const container = deployment?.spec?.template?.spec?.containers?.find((c) => c.name === CONTAINER_NAME);
  const args = container?.args;
  if (!Array.isArray(args) || args[0] !== "controller" || !args.every((a) => typeof a === "string")) {
    throw new RekindleError(
      "INVALID_INPUT",
      `${file}: no Deployment ${DEPLOYMENT_NAME} whose container "${CONTAINER_NAME}" runs args [controller, …]`,
      { hint: "the in-cluster controller's expected timeline is read from that manifest" },
    );
  }
  const flags = parseControllerFlags(args.slice(1));
  return {
    image: typeof container?.image === "string" ? container.image : "",
    args: args.slice(1),
    config: controllerSettings(flags).config,
    leaderElect: flags["leader-elect"],
    replicas: typeof deployment?.spec?.replicas === "number" ? deployment.spec.replicas : 1,
    nodeFlags: nodeFlagsOf(container?.command),
  };
}
