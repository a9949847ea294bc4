import type { OrchestrateJobs } from '../../control-plane/contracts.ts';

/** Execution steps, as activities over orchestrate's jobs. */
export function createOrchestrateActivities(deps: { orchestrate: Pick<OrchestrateJobs, 'runStep' | 'recordStep' | 'finish'> }) {
  const { orchestrate } = deps;
  return {
    runStep: orchestrate.runStep,
    recordStep: orchestrate.recordStep,
    finishExecution: orchestrate.finish,
  };
}
