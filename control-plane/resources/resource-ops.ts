import type { Tx } from '../db/client.ts';
import { NotFoundError, VersionConflictError } from '../errors.ts';
import type { ObjectType } from '../object-types/object-types.schema.ts';
import { deleteResource, findResource, insertResource, insertResourceOnce, writeResourceData } from './resources.repo.ts';
import type { Resource } from './resources.schema.ts';

export type ResourceData = Record<string, unknown>;

/** Checks data against its object type's schema (the object-types service's `validate`). */
export type ValidateData = (objectType: ObjectType, data: ResourceData) => void;

/**
 * `data` with the type's file properties as `from` holds them: they are the platform's fields,
 * set only by uploads, so what a client sends for them is ignored.
 */
function keepFileProperties(objectType: ObjectType, data: ResourceData, from: ResourceData = {}): ResourceData {
  const names = Object.keys(objectType.fileProperties);
  if (names.length === 0) return data;
  const kept = { ...data };
  for (const name of names) {
    delete kept[name];
    if (Object.hasOwn(from, name)) kept[name] = from[name];
  }
  return kept;
}

/**
 * The resource engine's operations inside one transaction of the tenant, so that a caller can run
 * several of them atomically (a batch, an action and its history). Each checks what it writes
 * against the object type; none checks the actor's permissions, which are the caller's to check.
 */
export function resourceOps(tx: Tx, validate: ValidateData) {
  return {
    /** The resource, or undefined when the tenant has none of this type and id; `lock` holds its row until commit. */
    read(type: string, id: string, options: { lock?: boolean } = {}): Promise<Resource | undefined> {
      return findResource(tx, type, id, options.lock);
    },

    async insert(objectType: ObjectType, data: ResourceData, createdBy: string): Promise<Resource> {
      const kept = keepFileProperties(objectType, data);
      validate(objectType, kept);
      return insertResource(tx, objectType.key, kept, createdBy);
    },

    /** Inserts under a caller-chosen id unless it exists; returns the stored row either way (undefined when the id holds another type). */
    async insertOnce(objectType: ObjectType, id: string, data: ResourceData, createdBy: string): Promise<Resource | undefined> {
      const kept = keepFileProperties(objectType, data);
      validate(objectType, kept);
      return insertResourceOnce(tx, id, objectType.key, kept, createdBy);
    },

    /**
     * The one checked write: locks the row, refuses a stale `expectedVersion` (409 with the current
     * one), computes the new data from the current resource, validates it, and bumps the version.
     * File properties keep their stored values unless `files` is `set` (an upload's own write).
     */
    async write(
      objectType: ObjectType,
      id: string,
      write: { change: (current: Resource) => ResourceData; expectedVersion?: number; by: string | null; files?: 'keep' | 'set' },
    ): Promise<Resource> {
      const current = await findResource(tx, objectType.key, id, true);
      if (!current) throw new NotFoundError('resource');
      if (write.expectedVersion !== undefined && current.version !== write.expectedVersion) throw new VersionConflictError(write.expectedVersion, current.version);
      const changed = write.change(current);
      const data = write.files === 'set' ? changed : keepFileProperties(objectType, changed, current.data);
      validate(objectType, data);
      // The row is locked and its version checked: the write cannot miss it.
      return (await writeResourceData(tx, objectType.key, id, data, current.version, write.by))!;
    },

    /** Deletes the resource; false when there was none. With `expectedVersion`, a stale one is a 409 and nothing is deleted. */
    async delete(type: string, id: string, expectedVersion?: number): Promise<boolean> {
      if (expectedVersion !== undefined) {
        const current = await findResource(tx, type, id, true);
        if (!current) return false;
        if (current.version !== expectedVersion) throw new VersionConflictError(expectedVersion, current.version);
      }
      return deleteResource(tx, type, id);
    },
  };
}

export type ResourceOps = ReturnType<typeof resourceOps>;
