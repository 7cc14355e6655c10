// The run's flags for a cluster rekindle did not create, parsed and checked before anything starts:
// the existing-only flags on another provider, and --allow-faults with its node choice and deadline.
import { RekindleError } from "../errors.js";
import {
  checkFaultDeadline,
  checkRailsRequest,
  parseNodeNames,
  type FaultRailsRequest,
} from "../cluster/existing/rails.js";
import { parseCount } from "../util/parse-count.js";
import { parseDurationMs } from "../util/duration.js";
import { timingProfile } from "../cluster/profiles.js";
import type { FilePlan } from "../scenario-file/plan.js";
import { KIND_STORAGE_CLASSES } from "../cluster/kind/storage-classes.js";

export interface RunRailsInput {
  provider?: string | undefined;
  profile?: string | undefined;
  storageClass?: string | undefined;
  fenceConfig?: string | undefined;
  controllerImage?: string | undefined;
  rails?: FaultRailsRequest | undefined;
}

/** Why each existing-only flag means nothing on rekindle's own clusters. */
const OWN_CLUSTERS_HAVE = {
  "--storage-class": "the sim brings its own storage (rekindle-sim)",
  "--fence-config":
    "rekindle's own clusters fence with their own driver (sim: its power API, kind: the engine and its power webhook)",
  "--controller-image": "rekindle's own clusters build the controller image and load it themselves",
} as const;

/**
 * --allow-faults, its node choice, --storage-class, --fence-config, --controller-image: well-formed,
 * and only for existing (--storage-class also for kind, one of its two classes).
 */
export function checkRunRails(options: RunRailsInput, filePlan: FilePlan | undefined): void {
  const provider = filePlan?.provider ?? options.provider;
  const given = {
    "--storage-class": options.storageClass,
    "--fence-config": options.fenceConfig,
    "--controller-image": options.controllerImage,
  };
  for (const [flag, hint] of Object.entries(OWN_CLUSTERS_HAVE)) {
    if (given[flag as keyof typeof given] === undefined || provider === "existing") continue;
    if (flag === "--storage-class" && provider === "kind") continue;
    const providers = flag === "--storage-class" ? "existing or --provider kind" : "existing";
    throw new RekindleError("INVALID_INPUT", `${flag} is for --provider ${providers}`, { hint });
  }
  const storageClass = options.storageClass;
  if (provider === "kind" && storageClass !== undefined && !isKindStorageClass(storageClass))
    throw RekindleError.invalidInput("--storage-class", storageClass, KIND_STORAGE_CLASSES);
  if (options.rails === undefined) return;
  checkRailsRequest(options.rails);
  const { deadlineMs } = options.rails;
  if (deadlineMs !== undefined)
    checkFaultDeadline(deadlineMs, filePlan?.profile ?? timingProfile(options.profile ?? "default"));
  if (options.rails.allowFaults && provider !== "existing")
    throw new RekindleError("INVALID_INPUT", "--allow-faults is for --provider existing", {
      hint: "rekindle's own clusters (sim, kind) take node faults without it",
    });
}

function isKindStorageClass(name: string): boolean {
  return (KIND_STORAGE_CLASSES as readonly string[]).includes(name);
}

/** The rails flags of `rekindle run`, as given. */
export interface RailsFlags {
  "allow-faults"?: boolean | undefined;
  "node-selector"?: string | undefined;
  "nodes-selector"?: string | undefined;
  nodes?: string | undefined;
  "max-faulted-nodes"?: string | undefined;
  "fault-deadline"?: string | undefined;
}

/** The rails flags as a request (undefined when none was given); checked with the run's other flags. */
export function railsRequest(flags: RailsFlags): FaultRailsRequest | undefined {
  const selector = nodeSelector(flags);
  const { nodes, "max-faulted-nodes": max, "fault-deadline": deadline } = flags;
  const allowFaults = flags["allow-faults"] === true;
  if (!allowFaults && [selector, nodes, max, deadline].every((v) => v === undefined)) return undefined;
  return {
    ...(deadline !== undefined ? { deadlineMs: parseDurationMs(deadline, "--fault-deadline") } : {}),
    allowFaults,
    ...(selector !== undefined ? { selector } : {}),
    ...(nodes !== undefined ? { nodes: parseNodeNames(nodes) } : {}),
    ...(max !== undefined ? { maxNodes: parseCount("--max-faulted-nodes", max) } : {}),
  };
}

/** --node-selector, or its old spelling --nodes-selector; both given must agree. */
function nodeSelector(flags: RailsFlags): string | undefined {
  const { "node-selector": selector, "nodes-selector": old } = flags;
  if (selector !== undefined && old !== undefined && selector !== old)
    throw new RekindleError(
      "INVALID_INPUT",
      `--node-selector ${selector} and --nodes-selector ${old} differ`,
      {
        hint: "--nodes-selector is the old spelling of --node-selector: pass one of them",
      },
    );
  return selector ?? old;
}
