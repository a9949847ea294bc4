import { CancellationScope, isCancellation, proxyActivities, sleep } from '@temporalio/workflow';
import type { ExecutionPlan } from '../../control-plane/orchestrate/orchestrate.schema.ts';
import { delayMs } from '../../control-plane/orchestrate/templates.ts';
import type { Activities } from '../activities/index.ts';

// A refusal by the tenant's plan (a capability it lacks, a daily limit spent) fails the execution at once.
const STEP_RETRY = { maximumAttempts: 5, initialInterval: '1 second', nonRetryableErrorTypes: ['ForbiddenError', 'RateLimitError'] };
/** A step may wait minutes for a model's answer; it heartbeats (workers/activities/orchestrate.activities.ts), so a lost one is retried after 20 s. */
const { runStep } = proxyActivities<Activities>({ startToCloseTimeout: '5 minutes', heartbeatTimeout: '20 seconds', retry: STEP_RETRY });
/** Recording a step's state is one statement. */
const { recordStep, finishExecution } = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: STEP_RETRY });

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
