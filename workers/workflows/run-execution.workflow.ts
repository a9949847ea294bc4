import { CancellationScope, isCancellation, proxyActivities, sleep } from '@temporalio/workflow';
import type { ExecutionPlan } from '../../control-plane/orchestrate/orchestrate.schema.ts';
import { delayMs } from '../../control-plane/orchestrate/templates.ts';
import type { Activities } from '../activities/index.ts';

const { runStep, recordStep, finishExecution } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  // A refusal by the tenant's plan (a capability it lacks, a daily limit spent) fails the execution at once.
  retry: { maximumAttempts: 5, initialInterval: '1 second', nonRetryableErrorTypes: ['ForbiddenError', 'RateLimitError'] },
});

/**
 * Runs an execution's steps in order, each as an activity that records its state (a `delay` step
 * is a durable timer in the workflow itself); the row is closed as completed, failed or cancelled.
 * The output is the last step's output.
 */
export async function runExecution(plan: ExecutionPlan): Promise<Record<string, unknown>> {
  const outputs: Record<string, Record<string, unknown>> = {};
  try {
    for (let index = 0; index < plan.steps.length; index++) {
      const step = plan.steps[index]!;
      if (step.type === 'delay') {
        const ms = delayMs(step.config, plan.input);
        await recordStep(plan, index, 'running', 0);
        await sleep(ms);
        await recordStep(plan, index, 'completed', ms);
        outputs[step.id] = { waitedMs: ms };
      } else {
        outputs[step.id] = await runStep(plan, index, outputs);
      }
    }
    const output = outputs[plan.steps[plan.steps.length - 1]!.id]!;
    await finishExecution({ tenantId: plan.tenantId, executionId: plan.executionId, state: 'completed', output });
    return output;
  } catch (error) {
    const state = isCancellation(error) ? 'cancelled' : 'failed';
    const message = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    await CancellationScope.nonCancellable(() => finishExecution({ tenantId: plan.tenantId, executionId: plan.executionId, state, error: message }));
    throw error;
  }
}
