// What a scenario's context is made of, set up by runScenario: a leaf, so the context
// (scenario-context.ts) and the in-process controller it starts (scenario-controller.ts) both
// take it without importing each other.
import type { ClusterUnderTest, ClusterWith, NodeCapability } from "../cluster/provider.js";
import type { ExpectedMilestone, NominalWindow } from "../expect/windows.js";
import type { k8s } from "../kube/client.js";
import type { LineTail } from "../util/line-tail.js";
import type { Progress } from "../util/progress.js";
import type { ExpectationInputs, ScenarioDefinition } from "./harness-types.js";
import type { ScenarioTimeline } from "./scenario-timeline.js";
import type { ScenarioSteps } from "./steps.js";

/** What the context is made of, set up by runScenario. */
export interface ScenarioContextParts<R extends NodeCapability> {
  definition: ScenarioDefinition<R>;
  /** The cluster as given (its fence driver is offered even when the scenario did not require it). */
  given: ClusterUnderTest;
  cluster: ClusterWith<R>;
  kc: k8s.KubeConfig;
  steps: ScenarioSteps;
  namespace: string;
  inputs: ExpectationInputs;
  signal: AbortSignal | undefined;
  progress: Progress;
  timeline: ScenarioTimeline;
  /** The expected timeline the verdict checks (a scenario may refine it once it knows what the fault hits). */
  expected: readonly ExpectedMilestone[];
  /** Whose recovery is the headline number; undefined: the definition's recoveryOf, else every workload. */
  recoveryOf: readonly string[] | undefined;
  /** The nominal windows: a milestone's wait defaults to its upper bound plus a minute. */
  nominal: readonly NominalWindow[];
  /** The in-process controllers' last lines: a milestone that never comes is often their decision. */
  controllerTail: LineTail;
  /** A random wait below this (ms) right before the first fault (lib/fault/phase-spread.ts). */
  faultPhaseSpreadMs: number;
}
