import { createDocumentsActivities } from './documents.activities.ts';
import { createOrchestrateActivities } from './orchestrate.activities.ts';
import { createStorageActivities } from './storage.activities.ts';
import { createTenantsActivities } from './tenants.activities.ts';

/** What the activities call on the platform: each domain's functions for workflows, and nothing else. */
export type WorkerServices = Parameters<typeof createDocumentsActivities>[0] &
  Parameters<typeof createOrchestrateActivities>[0] &
  Parameters<typeof createStorageActivities>[0] &
  Parameters<typeof createTenantsActivities>[0];

/** Every activity, built from the functions the platform gives workflows (no module-level singletons). */
export function createActivities(deps: WorkerServices) {
  return {
    ...createOrchestrateActivities(deps),
    ...createStorageActivities(deps),
    ...createTenantsActivities(deps),
    ...createDocumentsActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
