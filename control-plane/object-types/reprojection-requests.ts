import type { Db } from '../db/client.ts';
import { claimReprojections, clearReprojection, renewReprojection, reprojectionsPending } from './object-types.repo.ts';

/**
 * The requests to bring a built-in type's search projections to its search fields, which a
 * migration that changes those fields makes (`object_types.search_reprojection_requested_at`):
 * claimed by one process at a time for a lease it renews, and cleared once every tenant's
 * resources are projected.
 */
export function reprojectionRequests(db: Db) {
  return {
    claim: (leaseMs: number) => db.system((tx) => claimReprojections(tx, leaseMs)),
    renew: (key: string, requestedAt: string, leaseMs: number) => db.system((tx) => renewReprojection(tx, key, requestedAt, leaseMs)),
    done: (key: string, requestedAt: string) => db.system((tx) => clearReprojection(tx, key, requestedAt)),
    pending: () => db.system((tx) => reprojectionsPending(tx)),
  };
}
