import type { Db } from '../db/client.ts';
import { clearReprojection, pendingReprojections } from './object-types.repo.ts';

/**
 * The requests to bring a built-in type's search projections to its search fields, which a
 * migration that changes those fields makes (`object_types.search_reprojection_requested_at`):
 * what is asked, and clearing a request once every tenant's resources are projected.
 */
export function reprojectionRequests(db: Db) {
  return {
    pending: () => db.system((tx) => pendingReprojections(tx)),
    done: (key: string, requestedAt: string) => db.system((tx) => clearReprojection(tx, key, requestedAt)),
  };
}
