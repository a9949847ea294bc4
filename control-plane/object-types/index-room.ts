import type { Tx } from '../db/client.ts';
import { ForbiddenError } from '../errors.ts';
import { indexedPaths } from './indexed-fields.ts';
import { listObjectTypes, lockTenantIndexes } from './object-types.repo.ts';

/**
 * Indexed fields (its `indexes` and the fields its schema marks `x-indexed`) one object type may
 * ask for: each becomes a partial index on the `resources` table every tenant shares, which every
 * write of the type maintains.
 */
export const MAX_INDEXED_FIELDS_PER_TYPE = 20;
/** Indexed fields of all of a tenant's object types together. */
export const MAX_INDEXED_FIELDS_PER_TENANT = 50;

/** The distinct fields a type asks to be indexed. */
export const indexedFieldsOf = (type: { schema: object; indexes: readonly string[] }) =>
  new Set([...type.indexes, ...indexedPaths(type.schema as never).map((path) => path.join('.'))]).size;

/**
 * Refuses (403, naming the limit) a type that would ask for more indexed fields than one type,
 * or all the tenant's types together, may have. `except` is the type being changed. Holds the
 * tenant's lock on index counts until the transaction ends, so that two changes cannot both fit.
 */
export async function assertIndexRoom(tx: Tx, type: { schema: object; indexes: readonly string[] }, except?: string): Promise<void> {
  const requested = indexedFieldsOf(type);
  if (requested > MAX_INDEXED_FIELDS_PER_TYPE) {
    throw new ForbiddenError(`an object type may have at most ${MAX_INDEXED_FIELDS_PER_TYPE} indexed fields per object type (indexes and x-indexed fields); this one asks for ${requested}`, {
      limit: MAX_INDEXED_FIELDS_PER_TYPE,
      requested,
    });
  }
  await lockTenantIndexes(tx);
  const others = (await listObjectTypes(tx)).filter((t) => !t.builtIn && t.objectTypeId !== except);
  const total = others.reduce((sum, t) => sum + indexedFieldsOf(t), requested);
  if (total > MAX_INDEXED_FIELDS_PER_TENANT) {
    throw new ForbiddenError(`a tenant's object types may have at most ${MAX_INDEXED_FIELDS_PER_TENANT} indexed fields per tenant together; with this change they would have ${total}`, {
      limit: MAX_INDEXED_FIELDS_PER_TENANT,
      requested: total,
    });
  }
}
