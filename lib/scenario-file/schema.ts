// The JSON Schema (draft-07) of a scenario file's YAML form. The loader validates with it (ajv) and
// `npm run docs` publishes it as docs/scenario.schema.json, so editors complete and check files
// (`# yaml-language-server: $schema=…`). Every object refuses unknown keys; every property says
// what it means. `patternErrorMessage` is the message editors (and the loader) show for a pattern.
import { FAULT_TYPES, OPERATOR_ACTIONS, SCENARIO_API_VERSION, SCENARIO_KIND } from "./types.js";

/** The subset of draft-07 this schema uses, so a misspelt keyword fails to compile. */
export interface JsonSchema {
  $schema?: string;
  $id?: string;
  title?: string;
  description?: string;
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  properties?: Readonly<Record<string, JsonSchema>>;
  required?: readonly string[];
  additionalProperties?: boolean | JsonSchema;
  minProperties?: number;
  dependencies?: Readonly<Record<string, readonly string[]>>;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  enum?: readonly string[];
  const?: string;
  pattern?: string;
  patternErrorMessage?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  oneOf?: readonly JsonSchema[];
  default?: unknown;
  examples?: readonly unknown[];
}

/** Names (scenario, workload): a DNS label. */
export const NAME_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
export const NAME_FORMS =
  "lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters";
/** Go-style durations without a sign: "500ms", "45s", "1m30s", "2h". */
export const DURATION_PATTERN = "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$";
export const DURATION_FORMS_SHORT = "a duration such as 500ms, 45s, 2m or 1m30s (units ms, s, m, h)";
/** A Kubernetes namespace or Service name (DNS-1123 label). */
const DNS_LABEL = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
const DNS_LABEL_FORMS = "a DNS label: lower-case letters, digits and '-', at most 63 characters";
/** A label value (zones are label values). */
const LABEL_VALUE = "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$";

function duration(description: string): JsonSchema {
  return {
    description,
    type: "string",
    pattern: DURATION_PATTERN,
    patternErrorMessage: `expected ${DURATION_FORMS_SHORT}`,
    examples: ["30s"],
  };
}

/** A kubelet eviction threshold: a quantity or a percentage, as evictionHard takes them. */
export const THRESHOLD_PATTERN = "^([0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?|[0-9]+(\\.[0-9]+)?%)$";

function threshold(description: string): JsonSchema {
  return {
    description,
    type: "string",
    pattern: THRESHOLD_PATTERN,
    patternErrorMessage: "expected a quantity such as 200Mi or 1Gi, or a percentage such as 10%",
    examples: ["200Mi", "10%"],
  };
}

function flag(description: string): JsonSchema {
  return { description, type: "boolean" };
}

function dnsLabel(description: string): JsonSchema {
  return {
    description,
    type: "string",
    pattern: DNS_LABEL,
    maxLength: 63,
    patternErrorMessage: `expected ${DNS_LABEL_FORMS}`,
  };
}

function labels(description: string): JsonSchema {
  return {
    description,
    type: "object",
    minProperties: 1,
    additionalProperties: { type: "string", description: "A label value." },
  };
}

function path(description: string): JsonSchema {
  return { description, type: "string", minLength: 1 };
}

function objectOf(
  description: string,
  properties: Readonly<Record<string, JsonSchema>>,
  required: readonly string[] = [],
): JsonSchema {
  return {
    description,
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

/** `oneOf` over branches that each require one key: exactly one of `keys` is given. */
function exactlyOne(keys: readonly string[]): readonly JsonSchema[] {
  return keys.map((key) => ({ type: "object", required: [key] }));
}

export const WORKLOAD_SOURCE_KEYS = ["manifests", "kustomize", "deployed"] as const;
export const TARGET_KEYS = ["workload", "matchLabels", "zone"] as const;
export const PROBE_KEYS = ["http", "tcp"] as const;

const PORT: JsonSchema = {
  description:
    "A port of the workload's Service (its `port`, not the pods' targetPort): the probe goes through the Service.",
  type: "integer",
  minimum: 1,
  maximum: 65535,
};

const WORKLOAD: JsonSchema = {
  ...objectOf(
    "One workload of yours: where its objects come from (exactly one of manifests, kustomize, deployed), and how to tell it serves.",
    {
      name: {
        description:
          "The workload's id in milestones (`<name>:recovered`) and budgets; unique in the file. Not the name of a Kubernetes object.",
        type: "string",
        pattern: NAME_PATTERN,
        maxLength: 63,
        patternErrorMessage: `expected ${NAME_FORMS}`,
      },
      manifests: {
        description:
          "Manifest files or directories (*.yaml, *.yml, *.json), relative to this file, applied into the scenario's namespace.",
        type: "array",
        minItems: 1,
        items: path("A manifest file or directory, relative to this file."),
      },
      kustomize: path(
        "A kustomize directory (holding a kustomization.yaml), relative to this file, built with the cluster's kubectl (`kubectl kustomize`).",
      ),
      deployed: objectOf(
        "A workload already deployed, found by namespace and label selector (provider existing only).",
        {
          namespace: dnsLabel("The namespace it runs in."),
          matchLabels: labels("Labels its pods carry; every one must match."),
        },
        ["namespace", "matchLabels"],
      ),
      service: dnsLabel(
        "The Service that fronts it (in its namespace). Default: the Services whose selector matches its pods.",
      ),
      probe: {
        ...objectOf(
          "Recovered also needs this probe, made through the workload's Service from inside the cluster (kind only), to answer: exactly one of http, tcp.",
          {
            http: objectOf(
              "An HTTP GET that must answer 2xx or 3xx.",
              {
                port: PORT,
                path: {
                  description: "The request path. Default `/`.",
                  type: "string",
                  pattern: "^/[^\\s]*$",
                  patternErrorMessage: "expected a path starting with / and without spaces",
                  default: "/",
                },
              },
              ["port"],
            ),
            tcp: objectOf("A TCP connection that must be accepted.", { port: PORT }, ["port"]),
          },
        ),
        oneOf: exactlyOne(PROBE_KEYS),
      },
    },
    ["name"],
  ),
  oneOf: exactlyOne(WORKLOAD_SOURCE_KEYS),
};

const TARGET: JsonSchema = {
  ...objectOf("Which nodes the fault hits: exactly one of workload, matchLabels, zone.", {
    workload: {
      description:
        "The node that runs a pod of this workload (the first pod by name). Names a workload above.",
      type: "string",
      minLength: 1,
    },
    matchLabels: labels("Worker nodes whose labels all match (never a control-plane node)."),
    zone: {
      description: "Worker nodes of this zone (label topology.kubernetes.io/zone), e.g. zone-a.",
      type: "string",
      minLength: 1,
      maxLength: 63,
      pattern: LABEL_VALUE,
      patternErrorMessage: "expected a label value: letters, digits, '-', '_' and '.', at most 63 characters",
    },
    count: {
      description: "With zone: how many of its workers. Default every worker of the zone.",
      type: "integer",
      minimum: 1,
      maximum: 100,
    },
  }),
  oneOf: exactlyOne(TARGET_KEYS),
  dependencies: { count: ["zone"] },
};

const FAULT: JsonSchema = objectOf(
  "The fault injected, and on which nodes.",
  {
    type: {
      description:
        "stop: the node stops abruptly (power cut). partition: cut off from the control plane for `duration`. graceful-shutdown: an orderly shutdown the kubelet sees coming. memory-pressure, disk-pressure: the node's memory or disk runs out for `duration`.",
      type: "string",
      enum: FAULT_TYPES,
    },
    target: TARGET,
    duration: duration(
      "How long the fault lasts before it is lifted. Required for partition, memory-pressure and disk-pressure; not allowed for stop and graceful-shutdown.",
    ),
    stagger: duration(
      "When the target selects several nodes: the fault reaches the next node this long after the previous one. Default 0s (all at once).",
    ),
    operator: objectOf(
      "stop only: what an operator does by hand after the node is lost, and when.",
      {
        action: {
          description:
            "force-delete: `kubectl delete pod --force --grace-period=0` on the lost node's pods. drain: `kubectl drain` of the lost node (PodDisruptionBudgets apply). out-of-service: the node.kubernetes.io/out-of-service taint.",
          type: "string",
          enum: OPERATOR_ACTIONS,
        },
        after: duration("How long after the fault the operator acts."),
      },
      ["action", "after"],
    ),
  },
  ["type", "target"],
);

const KNOBS: JsonSchema = objectOf(
  "Timing knobs over the profile's; each one absent keeps the profile's value.",
  {
    nodeMonitorGracePeriod: duration(
      "kube-controller-manager --node-monitor-grace-period: how long a node's silence lasts before it is marked NotReady/Unknown.",
    ),
    nodeMonitorPeriod: duration(
      "kube-controller-manager --node-monitor-period: how often node status is checked.",
    ),
    nodeLeaseDuration: duration("The kubelet's node Lease duration (nodeLeaseDurationSeconds)."),
    defaultNotReadyToleration: duration(
      "kube-apiserver --default-not-ready-toleration-seconds: tolerationSeconds given to pods without their own.",
    ),
    defaultUnreachableToleration: duration(
      "kube-apiserver --default-unreachable-toleration-seconds: tolerationSeconds given to pods without their own.",
    ),
    shutdownGracePeriod: duration("The kubelet's shutdownGracePeriod (graceful node shutdown)."),
    pressureTransitionPeriod: duration(
      "The kubelet's evictionPressureTransitionPeriod: how long a pressure condition stays after it ends.",
    ),
    evictionHard: objectOf(
      "The kubelet's evictionHard thresholds. Not honoured by any provider yet, so refused before anything starts, with the reason: the sim's pressure has no thresholds (the fault meets the signal for its whole duration); kind's kubelet reads them from its kind config (spec.cluster.kindConfig, KubeletConfiguration evictionHard), where rekindle also reads them to size its pressure fill.",
      {
        memoryAvailable: threshold(
          "memory.available: the kubelet evicts when less memory than this is available.",
        ),
        nodefsAvailable: threshold(
          "nodefs.available: the kubelet evicts when less of its filesystem than this is free.",
        ),
      },
    ),
  },
);

const CLUSTER: JsonSchema = objectOf("The cluster the scenario runs on; every key optional.", {
  provider: {
    description:
      "sim: a simulated cluster (no containers run). kind: a kind cluster rekindle creates. existing: the cluster your kubeconfig reaches (no node faults). Default: the command line's, else kind when available, else sim.",
    type: "string",
    enum: ["sim", "kind", "existing"],
  },
  profile: {
    description:
      "The timing profile: default (upstream's timings), fast, or large (upstream's timings, a faster kube-controller-manager client: for hundreds of sim workers). Default: the command line's, else default.",
    type: "string",
    enum: ["default", "fast", "large"],
  },
  knobs: KNOBS,
  workers: {
    description:
      "Worker nodes (sim, kind). Default 3. Past 100 sim workers, the first 3 run their own kwok and the rest share one kwok per zone (docs/design.md).",
    type: "integer",
    minimum: 1,
    maximum: 1000,
  },
  zones: {
    description:
      "Zones the workers are spread over, round-robin (zone-a, zone-b, … zone-z); at most workers. Default 2 (1 with one worker).",
    type: "integer",
    minimum: 1,
    maximum: 26,
  },
  podsPerNode: {
    description:
      "sim only: filler pods bound to each worker that shares a kwok, so the API server holds a realistic object count. Default 0.",
    type: "integer",
    minimum: 0,
    maximum: 100,
  },
  kindConfig: path("kind only: a kind cluster config file, relative to this file."),
});

const CONTROLLER: JsonSchema = objectOf(
  "rekindle's recovery controller. Default: not enabled.",
  {
    enabled: { description: "Run the recovery controller during the scenario.", type: "boolean" },
    settings: objectOf("Controller settings over the profile's.", {
      unhealthyAfter: duration("A node whose Lease is older than this (or not Ready this long) is lost."),
      checkInterval: duration("How often nodes are checked."),
      healthyBeforeUnfence: duration(
        "A returned node must stay healthy this long before its taints are lifted.",
      ),
      detachGrace: duration(
        "How long the attach-detach controller gets to detach a fenced node's volumes before the controller deletes them.",
      ),
      maxUnhealthy: {
        description: 'Never fence more than this many nodes at once: a count ("2") or a percentage ("40%").',
        type: "string",
        pattern: "^([0-9]+|([0-9]|[1-9][0-9]|100)%)$",
        patternErrorMessage: 'expected a node count such as "2" or a percentage from "0%" to "100%"',
      },
    }),
    fenceConfig: path(
      "A fence config file (as `rekindle controller --fence-config` takes), relative to this file.",
    ),
  },
  ["enabled"],
);

const BUDGET: JsonSchema = objectOf(
  "Absolute service-level objectives for one workload, checked beside the model's windows; give at least one.",
  {
    workload: { description: "The workload, by its name above.", type: "string", minLength: 1 },
    recoveredWithin: duration("`<workload>:recovered` at most this long after the fault."),
    servingWithin: duration(
      "`<workload>:serving` (its Service's ready endpoints back to the wanted number) at most this long after the fault.",
    ),
    maxUnavailable: {
      description: "At no instant after the fault are more than this many of its wanted replicas not Ready.",
      type: "integer",
      minimum: 0,
    },
    neverEvicted: flag("None of its pods is evicted or deleted by the node lifecycle or the kubelet."),
    neverReadyOnTwoNodes: flag(
      "Never two of its pods Ready at once on different nodes (StatefulSet split brain).",
    ),
    neverTwoWriters: flag(
      "Never two copies of it writing to its volume at once, as the log of the writer workload it then runs shows (`<workload>:two-writers`). A StatefulSet with a ReadWriteOnce claim; provider kind only.",
    ),
  },
  ["workload"],
);

/** The schema of a scenario file, as docs/scenario.schema.json publishes it. */
export const SCENARIO_SCHEMA: JsonSchema = {
  $schema: "http://json-schema.org/draft-07/schema#",
  $id: "https://rekindle.dev/schemas/scenario.schema.json",
  title: "rekindle scenario file (rekindle run -f)",
  ...objectOf(
    "One scenario: your workloads, the fault, the cluster, the controller and the budgets. Reference: docs/scenario-files.md.",
    {
      apiVersion: { description: "The format's version.", type: "string", const: SCENARIO_API_VERSION },
      kind: { description: "Always Scenario.", type: "string", const: SCENARIO_KIND },
      metadata: objectOf(
        "The scenario's name and description.",
        {
          name: {
            description: "The scenario's name in reports; unique among the files of one run.",
            type: "string",
            pattern: NAME_PATTERN,
            maxLength: 63,
            patternErrorMessage: `expected ${NAME_FORMS}`,
          },
          description: { description: "Free text, shown in reports.", type: "string" },
        },
        ["name"],
      ),
      spec: objectOf(
        "What the scenario does.",
        {
          cluster: CLUSTER,
          workloads: {
            description: "Your workloads (at least one), each with a unique name.",
            type: "array",
            minItems: 1,
            items: WORKLOAD,
          },
          fault: FAULT,
          controller: CONTROLLER,
          budgets: {
            description: "Service-level objectives, each for one workload. Default none.",
            type: "array",
            items: BUDGET,
          },
          repeat: {
            description: "How many times the scenario runs. Default 1.",
            type: "integer",
            minimum: 1,
            maximum: 100,
            default: 1,
          },
        },
        ["workloads", "fault"],
      ),
    },
    ["apiVersion", "kind", "metadata", "spec"],
  ),
};

/** docs/scenario.schema.json's text. */
export function scenarioSchemaText(): string {
  return `${JSON.stringify(SCENARIO_SCHEMA, null, 2)}\n`;
}
