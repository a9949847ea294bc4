import type { Db } from '../db/client.ts';
import { NotFoundError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { ObjectTypesService } from '../object-types/object-types.service.ts';
import { selectVersions } from './resource-versions.repo.ts';
import { findResource } from './resources.repo.ts';
import type { ResourceHistoryInput, ResourceHistoryPage } from './resources.schema.ts';

/**
 * A resource's history: the versions the engine recorded (resource-ops.ts), newest first. It
 * outlives the resource, so a deleted resource's history still answers; an id the tenant never
 * had (of this type) is a 404.
 */
export function createResourceHistory(deps: { db: Db; objectTypes: ObjectTypesService }) {
  const { db, objectTypes } = deps;

  return {
    async history(actor: Actor, input: ResourceHistoryInput): Promise<ResourceHistoryPage> {
      return db.inTenant(actor.tenantId, async (tx) => {
        const objectType = await objectTypes.find(tx, input.type);
        if (!objectType) throw new NotFoundError('resource');
        const { rows, total } = await selectVersions(tx, objectType.key, input.id, input.limit, (input.page - 1) * input.limit);
        // A resource written only around the engine (none should be) still exists: its history is empty, not missing.
        if (total === 0 && !(await findResource(tx, objectType.key, input.id))) throw new NotFoundError('resource');
        return { items: rows, total, page: input.page, limit: input.limit, hasMore: (input.page - 1) * input.limit + rows.length < total };
      });
    },
  };
}
