import { afterStatements, type Tx } from '../db/client.ts';
import { NotFoundError, ValidationError, VersionConflictError } from '../errors.ts';
import type { ObjectType } from '../object-types/object-types.schema.ts';
import { insertVersion } from './resource-versions.repo.ts';
import { deleteResource, findResource, insertResource, insertResourceOnce, writeResourceData } from './resources.repo.ts';
import type { Resource } from './resources.schema.ts';

export type ResourceData = Record<string, unknown>;

/** Checks data against its object type's schema (the object-types service's `validate`). */
export type ValidateData = (objectType: ObjectType, data: ResourceData) => void;

/**
 * Keeps a search projection of each resource current inside the transaction of its write, so that
 * what is committed is what is found (the search domain implements it).
 */
export interface ResourceSearchIndex {
  written(tx: Tx, objectType: ObjectType, resource: Resource): Promise<void>;
  deleted(tx: Tx, type: string, id: string): Promise<void>;
}

/** Removes the files attached to deleted resources, after their delete committed; never throws (a failure is logged). */
export type RemoveResourceFiles = (tenantId: string, resourceIds: readonly string[]) => Promise<void>;

/** What a checked write records in the resource's history: an update, or an object type's action (`action:approve`). */
export type WriteOperation = 'update' | `action:${string}`;

/** The history entry of a write that is named `operation`. */
function writeEntry(operation: WriteOperation): { operation: 'update' | 'action'; action?: string } {
  return operation === 'update' ? { operation: 'update' } : { operation: 'action', action: operation.slice('action:'.length) };
}

/** A version named by `If-Match`: `*` names whatever is stored. */
export type IfMatch = number | '*';

/** The version a write names: the body's, else `If-Match`'s (`*`: none); both must agree. */
export function namedVersion(version: number | undefined, ifMatch: IfMatch | undefined): number | undefined {
  if (version !== undefined && typeof ifMatch === 'number' && ifMatch !== version) throw ValidationError.field('version', 'differs from the If-Match header');
  return version ?? (ifMatch === '*' ? undefined : ifMatch);
}

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
 * Whether a replace of the type's data can be one statement (REPLACE_AT_TYPE_VERSION_SQL): it
 * cannot when file properties keep their stored values, or a search projection follows the row.
 */
export function replacesInOneStatement(objectType: ObjectType, searchIndex?: ResourceSearchIndex): boolean {
  return Object.keys(objectType.fileProperties).length === 0 && !(searchIndex && objectType.searchFields.length > 0);
}

/** Data that a type read before the transaction accepts, to replace in one statement (REPLACE_AT_TYPE_VERSION_SQL). */
export interface OneStatementReplace {
  readonly objectType: ObjectType;
  readonly data: ResourceData;
}

/**
 * Checks `data` against a type read before the transaction, before one is opened: undefined when
 * the write needs more than one statement or the type refuses the data, which the checked path
 * then answers against the type as it is now.
 */
export function checkOneStatementReplace(objectType: ObjectType, data: ResourceData, validate: ValidateData, searchIndex?: ResourceSearchIndex): OneStatementReplace | undefined {
  if (!replacesInOneStatement(objectType, searchIndex)) return undefined;
  try {
    validate(objectType, data);
  } catch (error) {
    if (error instanceof ValidationError) return undefined;
    throw error;
  }
  return { objectType, data };
}

/**
 * The resource engine's operations inside one transaction of the tenant, so that a caller can run
 * several of them atomically (a batch, an action). Each checks what it writes against the object
 * type and appends the change to the resource's history (`resource_versions`) in the same
 * transaction, so no write through the engine goes unrecorded; none checks the actor's
 * permissions, which are the caller's to check.
 */
export function resourceOps(tx: Tx, validate: ValidateData, searchIndex?: ResourceSearchIndex) {
  const history = (resource: Resource, entry: 'create' | 'delete' | { operation: 'update' | 'action'; action?: string }, by: string | null) =>
    insertVersion(tx, { id: resource.id, type: resource.type, version: resource.version, data: resource.data, actor: by, ...(typeof entry === 'string' ? { operation: entry } : entry) });
  /**
   * Every change goes through here: its history entry and its search projection, both in the
   * write's transaction, pipelined on the connection; the history entry also with the commit.
   */
  const record = async (
    resource: Resource,
    entry: 'create' | 'delete' | { operation: 'update' | 'action'; action?: string },
    by: string | null,
    objectType?: ObjectType,
  ) => {
    // The history entry is one statement, sent now; it may travel with the commit. The projection
    // may send several, one after another, so it is awaited here, inside the transaction.
    const logged = history(resource, entry, by);
    logged.catch(() => {});
    if (searchIndex) {
      if (entry === 'delete') await searchIndex.deleted(tx, resource.type, resource.id);
      else if (objectType) await searchIndex.written(tx, objectType, resource);
    }
    await afterStatements(tx, logged);
  };

  /** The stored resource, at `expectedVersion` when one is named: 404 without one, 409 (with the current version) at another. */
  const storedAt = async (type: string, id: string, expectedVersion: number | undefined, lock: boolean): Promise<Resource> => {
    const current = await findResource(tx, type, id, lock);
    if (!current) throw new NotFoundError('resource');
    if (expectedVersion !== undefined && current.version !== expectedVersion) throw new VersionConflictError(expectedVersion, current.version);
    return current;
  };

  return {
    /** The resource, or undefined when the tenant has none of this type and id; `lock` holds its row until commit. */
    read(type: string, id: string, options: { lock?: boolean } = {}): Promise<Resource | undefined> {
      return findResource(tx, type, id, options.lock);
    },

    async insert(objectType: ObjectType, data: ResourceData, createdBy: string): Promise<Resource> {
      const kept = keepFileProperties(objectType, data);
      validate(objectType, kept);
      const resource = await insertResource(tx, objectType.key, kept, createdBy);
      await record(resource, 'create', createdBy, objectType);
      return resource;
    },

    /** Inserts under a caller-chosen id unless it exists; returns the stored row either way (undefined when the id holds another type). */
    async insertOnce(objectType: ObjectType, id: string, data: ResourceData, createdBy: string): Promise<Resource | undefined> {
      const kept = keepFileProperties(objectType, data);
      validate(objectType, kept);
      const { resource, inserted } = await insertResourceOnce(tx, id, objectType.key, kept, createdBy);
      if (inserted) await record(resource!, 'create', createdBy, objectType);
      return resource;
    },

    /**
     * The one checked write: locks the row, refuses a stale `expectedVersion` (409 with the current
     * one), computes the new data from the current resource, validates it, and bumps the version.
     * File properties keep their stored values unless `files` is `set` (an upload's own write).
     * The history records it as `operation` (default `update`).
     */
    async write(
      objectType: ObjectType,
      id: string,
      write: { change: (current: Resource) => ResourceData; expectedVersion?: number; by: string | null; operation?: WriteOperation; files?: 'keep' | 'set' },
    ): Promise<Resource> {
      const current = await storedAt(objectType.key, id, write.expectedVersion, true);
      const changed = write.change(current);
      const data = write.files === 'set' ? changed : keepFileProperties(objectType, changed, current.data);
      validate(objectType, data);
      // The row is locked and its version checked: the write cannot miss it.
      const written = (await writeResourceData(tx, objectType.key, id, data, current.version, write.by))!;
      await record(written, writeEntry(write.operation ?? 'update'), write.by, objectType);
      return written;
    },

    /**
     * Replaces the data at `expectedVersion` in one statement, without locking the row first: the
     * update names the version, so a stale one changes nothing, and only then is the row read, to
     * answer 404 or 409 as the checked write does. Without a version, or for a type with file
     * properties (whose stored values the new data keeps), it is the checked write.
     */
    async replace(objectType: ObjectType, id: string, replace: { data: ResourceData; expectedVersion?: number; by: string | null }): Promise<Resource> {
      const { data, expectedVersion, by } = replace;
      if (expectedVersion === undefined || Object.keys(objectType.fileProperties).length > 0) {
        return this.write(objectType, id, { change: () => data, expectedVersion, by });
      }
      try {
        validate(objectType, data);
      } catch (error) {
        await storedAt(objectType.key, id, expectedVersion, false);
        throw error;
      }
      const written = await writeResourceData(tx, objectType.key, id, data, expectedVersion, by);
      if (!written) {
        // Nothing changed: the row is gone (404) or at another version (409), which storedAt says.
        const current = await storedAt(objectType.key, id, expectedVersion, false);
        throw new VersionConflictError(expectedVersion, current.version);
      }
      await record(written, { operation: 'update' }, by, objectType);
      return written;
    },

    /**
     * Deletes the resource; false when there was none. With `expectedVersion`, a stale one is a 409
     * and nothing is deleted. The history keeps the last data under the next version.
     */
    async delete(type: string, id: string, options: { expectedVersion?: number; by: string | null }): Promise<boolean> {
      if (options.expectedVersion !== undefined) {
        const current = await findResource(tx, type, id, true);
        if (!current) return false;
        if (current.version !== options.expectedVersion) throw new VersionConflictError(options.expectedVersion, current.version);
      }
      const deleted = await deleteResource(tx, type, id);
      if (deleted) await record({ ...deleted, version: deleted.version + 1 }, 'delete', options.by);
      return deleted !== undefined;
    },
  };
}

export type ResourceOps = ReturnType<typeof resourceOps>;
