import type { Services } from '../../control-plane/contracts.ts';
import { createDocumentsActivities } from './documents.activities.ts';
import { createOrchestrateActivities } from './orchestrate.activities.ts';
import { createStorageActivities } from './storage.activities.ts';
import { createTenantsActivities } from './tenants.activities.ts';

/** Every activity, built from control-plane services (no module-level singletons). */
export function createActivities(deps: { services: Services }) {
  return {
    ...createOrchestrateActivities(deps),
    ...createStorageActivities(deps),
    ...createTenantsActivities(deps),
    ...createDocumentsActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
