import type { Db, Tx } from '../db/client.ts';
import { DomainError, NotFoundError, ValidationError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { ObjectTypesService } from '../object-types/object-types.service.ts';
import { idempotently } from './idempotency-keys.ts';
import { resourceOps, type RemoveResourceFiles, type ResourceSearchIndex } from './resource-ops.ts';
import { lockResources } from './resources.repo.ts';
import type { BatchCreateInput, BatchDeleted, BatchDeleteInput, BatchResources, BatchUpdateInput, Resource } from './resources.schema.ts';

/**
 * One item of a batch failed, so the batch did nothing: the item's own error (its code, and so its
 * status) with `details: {index, error}`, `error` being the item's `{code, message, details?}`.
 */
export class BatchItemError extends DomainError {
  constructor(
    readonly index: number,
    readonly itemError: DomainError,
  ) {
    super(itemError.code, `item ${index}: ${itemError.message}`, { index, error: itemError.toBody() });
  }
}

/** Runs `apply` on each item in order; the first domain error becomes a BatchItemError naming its index. */
async function eachItem<T, R>(items: readonly T[], apply: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (const [index, item] of items.entries()) {
    try {
      results.push(await apply(item, index));
    } catch (error) {
      throw error instanceof DomainError ? new BatchItemError(index, error) : error;
    }
  }
  return results;
}

/** The first id that repeats an earlier one (ids name resources without case), and the earlier one's index. */
function firstRepeat(ids: readonly string[]): { index: number; first: number } | undefined {
  const seen = new Map<string, number>();
  for (const [index, id] of ids.entries()) {
    const first = seen.get(id.toLowerCase());
    if (first !== undefined) return { index, first };
    seen.set(id.toLowerCase(), index);
  }
  return undefined;
}

/**
 * Batches of creates, updates and deletes of one type: each batch is one tenant transaction
 * through the resource engine, so all its items apply (each recorded in its resource's history)
 * or none does. With an `idempotencyKey`, a retry answers what the first batch answered.
 */
export function createResourceBatches(deps: { db: Db; objectTypes: ObjectTypesService; searchIndex?: ResourceSearchIndex; removeFiles?: RemoveResourceFiles }) {
  const { db, objectTypes } = deps;
  const ops = (tx: Tx) => resourceOps(tx, objectTypes.validate, deps.searchIndex);

  return {
    async batchCreate(actor: Actor, input: BatchCreateInput): Promise<BatchResources> {
      const { idempotencyKey, ...request } = input;
      return db.inTenant(actor.tenantId, (tx) =>
        idempotently(tx, actor, idempotencyKey, { operation: 'resources.batchCreate', input: request }, async () => {
          const objectType = await objectTypes.requireWritable(tx, input.type);
          const engine = ops(tx);
          return { items: await eachItem(input.items, (data) => engine.insert(objectType, data, actor.userId)) };
        }),
      );
    },

    /** Replaces each item's data at the version it names; a stale one is a 409 naming its index. */
    async batchUpdate(actor: Actor, input: BatchUpdateInput): Promise<BatchResources> {
      const { idempotencyKey, ...request } = input;
      return db.inTenant(actor.tenantId, (tx) =>
        idempotently(tx, actor, idempotencyKey, { operation: 'resources.batchUpdate', input: request }, async () => {
          const objectType = await objectTypes.requireWritable(tx, input.type);
          const engine = ops(tx);
          await lockResources(tx, objectType.key, input.items.map((item) => item.id));
          const items: Resource[] = await eachItem(input.items, (item) =>
            engine.write(objectType, item.id, { change: () => item.data, expectedVersion: item.version, by: actor.userId }),
          );
          return { items };
        }),
      );
    },

    /** Deletes each resource; one the tenant does not have is a 404 naming its index. */
    async batchDelete(actor: Actor, input: BatchDeleteInput): Promise<BatchDeleted> {
      const repeat = firstRepeat(input.ids);
      if (repeat) throw ValidationError.field(`ids.${repeat.index}`, `repeats ids.${repeat.first}`);
      const { idempotencyKey, ...request } = input;
      let withFiles = false;
      const deleted = await db.inTenant(actor.tenantId, (tx) =>
        idempotently(tx, actor, idempotencyKey, { operation: 'resources.batchDelete', input: request }, async () => {
          const objectType = await objectTypes.requireWritable(tx, input.type);
          withFiles = Object.keys(objectType.fileProperties).length > 0;
          const engine = ops(tx);
          await lockResources(tx, objectType.key, input.ids);
          await eachItem(input.ids, async (id) => {
            if (!(await engine.delete(objectType.key, id, { by: actor.userId }))) throw new NotFoundError('resource');
          });
          return { deleted: input.ids.length };
        }),
      );
      if (withFiles) await deps.removeFiles?.(actor.tenantId, input.ids);
      return deleted;
    },
  };
}
