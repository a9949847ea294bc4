import { Context } from '@temporalio/activity';
import type { Services } from '../../control-plane/contracts.ts';

/** How often a queued storage step tells Temporal it is alive; its heartbeat timeout is a few times this. */
export const STORAGE_HEARTBEAT_MS = 5_000;

/**
 * Runs `step`, heartbeating while it runs when it is a queued activity. A step may take minutes
 * (an index built concurrently, every resource projected), so its start-to-close timeout is long;
 * the heartbeat lets Temporal retry one whose worker went away after the heartbeat timeout
 * instead. Local activities cannot heartbeat, and their steps are short.
 */
async function heartbeating<T>(step: () => Promise<T>): Promise<T> {
  const context = Context.current();
  if (context.info.isLocal) return step();
  context.heartbeat();
  const timer = setInterval(() => context.heartbeat(), STORAGE_HEARTBEAT_MS);
  try {
    return await step();
  } finally {
    clearInterval(timer);
  }
}

/** Storage provisioning steps, as activities over the storage service. */
export function createStorageActivities(deps: { services: Services }) {
  const { storage } = deps.services;
  return {
    beginStorageProvisioning: storage.beginProvisioning,
    ensureStorageBackend: (request: Parameters<typeof storage.ensureBackend>[0]) => heartbeating(() => storage.ensureBackend(request)),
    planStorageBackend: (request: Parameters<typeof storage.planBackend>[0]) => heartbeating(() => storage.planBackend(request)),
    failStorageProvisioning: storage.failProvisioning,
  };
}
