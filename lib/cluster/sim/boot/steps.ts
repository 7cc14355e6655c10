// Runs a boot as a list of named steps, in order, one progress phase each ("[3/10] start
// kube-apiserver"). A failure names its step; the error keeps its code, details and hint.
import { errorMessage, RekindleError } from "../../../errors.js";
import type { Progress } from "../../../util/progress.js";

export interface BootStep<Context> {
  /** What the step does, imperative ("start etcd"): shown in progress and in a failure. */
  readonly name: string;
  /** Does the step; resolves to a short result for the progress line ("healthy (pid 42)"). */
  run(context: Context): Promise<string>;
}

export async function runBootSteps<Context>(
  steps: readonly BootStep<Context>[],
  context: Context,
  progress: Progress,
): Promise<void> {
  for (const [index, step] of steps.entries()) {
    const phase = progress.phase(`[${index + 1}/${steps.length}] ${step.name}`);
    try {
      phase.end(await step.run(context));
    } catch (error) {
      phase.end("failed");
      throw bootStepError(step.name, error);
    }
  }
}

function bootStepError(step: string, error: unknown): RekindleError {
  const message = `sim boot step "${step}" failed: ${errorMessage(error)}`;
  if (error instanceof RekindleError) {
    return new RekindleError(error.code, message, {
      ...(error.hint === undefined ? {} : { hint: error.hint }),
      details: { ...error.details, step },
      cause: error,
    });
  }
  return new RekindleError("BOOT_FAILED", message, { details: { step }, cause: error });
}
