import type { OrchestrateService } from '../../control-plane/contracts.ts';

/** Execution steps, as activities over the orchestrate service. */
export function createOrchestrateActivities(deps: { orchestrate: Pick<OrchestrateService, 'runStep' | 'recordStep' | 'finish'> }) {
  const { orchestrate } = deps;
  return {
    runStep: orchestrate.runStep,
    recordStep: orchestrate.recordStep,
    finishExecution: orchestrate.finish,
  };
}
