import { Context } from '@temporalio/activity';
import type { OrchestrateJobs } from '../../control-plane/contracts.ts';

/** How often an execution step tells Temporal it is alive; its heartbeat timeout is a few times this. */
export const STEP_HEARTBEAT_MS = 5_000;

/**
 * Execution steps, as activities over orchestrate's jobs. A step heartbeats while it runs (an
 * `ai_chat` step waits for a model's answer), so a step whose worker went away is retried after
 * its heartbeat timeout, not its start-to-close timeout.
 */
export function createOrchestrateActivities(deps: { orchestrate: Pick<OrchestrateJobs, 'runStep' | 'recordStep' | 'finish'> }) {
  const { orchestrate } = deps;
  return {
    runStep: async (...args: Parameters<OrchestrateJobs['runStep']>) => {
      const context = Context.current();
      context.heartbeat();
      const timer = setInterval(() => context.heartbeat(), STEP_HEARTBEAT_MS);
      try {
        return await orchestrate.runStep(...args);
      } finally {
        clearInterval(timer);
      }
    },
    recordStep: orchestrate.recordStep,
    finishExecution: orchestrate.finish,
  };
}
