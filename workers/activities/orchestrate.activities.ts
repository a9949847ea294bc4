import type { Services } from '../../control-plane/contracts.ts';

/** Execution steps, as activities over the orchestrate service. */
export function createOrchestrateActivities(deps: { services: Services }) {
  const { orchestrate } = deps.services;
  return {
    runStep: orchestrate.runStep,
    recordStep: orchestrate.recordStep,
    finishExecution: orchestrate.finish,
  };
}
