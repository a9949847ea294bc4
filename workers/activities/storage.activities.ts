import type { Services } from '../../control-plane/contracts.ts';

/** Storage provisioning steps, as activities over the storage service. */
export function createStorageActivities(deps: { services: Services }) {
  const { storage } = deps.services;
  return {
    beginStorageProvisioning: storage.beginProvisioning,
    ensureStorageBackend: storage.ensureBackend,
    planStorageBackend: storage.planBackend,
    failStorageProvisioning: storage.failProvisioning,
  };
}
