import { isLockNotAvailable, type Db, type Tx } from '../db/client.ts';
import { ConflictError, NotFoundError, PreconditionRequiredError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { mergePatch } from '../json/merge-patch.ts';
import type { ObjectTypesService } from '../object-types/object-types.service.ts';
import type { ObjectType } from '../object-types/object-types.schema.ts';
import { idempotently } from './idempotency-keys.ts';
import { buildListStatements, readListPage, type ListOptions } from './list-statements.ts';
import { createListTotals } from './list-totals.ts';
import { createLruMap } from '../lru-map.ts';
import { createResourceBatches } from './resource-batches.ts';
import { createResourceHistory } from './resource-history.ts';
import { applyAction, type ActionWorkflows } from './resource-actions.ts';
import type { ApplyActionInput } from './resource-actions.schema.ts';
import { createResourceQueries } from './resource-queries.ts';
import { checkOneStatementReplace, namedVersion, replacesInOneStatement, resourceOps, type IfMatch, type RemoveResourceFiles, type ResourceData, type ResourceSearchIndex } from './resource-ops.ts';
import { isResourceId, replaceAtTypeVersion, resourcesAfter, selectResource } from './resources.repo.ts';
import type { ListResourcePageInput, ReplaceAtVersionInput, Resource, ResourceListPage, ResourcePage } from './resources.schema.ts';

export type ResourcesService = ReturnType<typeof createResourcesService>;


/** Resources read at a time when a type's search projection is rebuilt. */
const REPROJECT_PAGE = 500;

/** Writable object types a process remembers for PUTs at a version (by tenant and name); the least recently used is forgotten first. */
const MAX_KNOWN_TYPES = 1_000;

/** Keys are kebab-case: a name with a capital is a type's PascalCase name, resolved to its key. */
const isPascalName = (type: string) => /[A-Z]/.test(type);

/** Generic CRUD and queries over typed resources; every call runs inside the actor's tenant. */
export function createResourcesService(deps: {
  db: Db;
  objectTypes: ObjectTypesService;
  actionWorkflows?: ActionWorkflows;
  searchIndex?: ResourceSearchIndex;
  /** The files of deleted resources go after the delete commits (resource-files.ts). */
  removeFiles?: RemoveResourceFiles;
}) {
  const { db, objectTypes } = deps;
  const totals = createListTotals();
  const queries = createResourceQueries({ ...deps, totals });
  const ops = (tx: Tx) => resourceOps(tx, objectTypes.validate, deps.searchIndex);
  const knownTypes = createLruMap<ObjectType>(MAX_KNOWN_TYPES);

  async function list(actor: Actor, options: ListOptions): Promise<ResourcePage> {
    return db.inTenant(actor.tenantId, async (tx) => {
      const objectType = await objectTypes.require(tx, options.type);
      const statements = buildListStatements(actor.tenantId, { ...options, type: objectType.key }, objectType.schema);
      return readListPage(tx, totals, statements, options.limit, options.cursor, options.count);
    });
  }

  /**
   * A PUT at a version whose type this process knows is one round trip: data checked against the
   * type as it was last read, before any transaction, and written only if the type is still at
   * that version, in a transaction of its own that shares a connection with other such writes
   * (`Db.writeInTenant`). Should the type refuse the data, the write change nothing (type changed,
   * resource gone or at another version) or wait too long for a lock, the checked path reads the
   * type again and answers.
   */
  async function replace(actor: Actor, type: string, id: string, data: ResourceData, expectedVersion?: number): Promise<Resource> {
    const typeKey = `${actor.tenantId}\u0000${type}`;
    const known = expectedVersion === undefined ? undefined : knownTypes.get(typeKey);
    const checked = known && checkOneStatementReplace(known, data, objectTypes.validate, deps.searchIndex);
    if (checked && isResourceId(id)) {
      const sent = db.writeInTenant(actor.tenantId, (tx) => replaceAtTypeVersion(tx, checked.objectType, id, checked.data, expectedVersion!, actor.userId));
      // A row locked for longer than a shared write may wait: the checked path waits for it.
      const [written] = await sent.catch((error: unknown) => (isLockNotAvailable(error) ? [] : Promise.reject(error)));
      if (written) return written;
    }
    return db.inTenant(actor.tenantId, async (tx) => {
      const objectType = await objectTypes.requireWritable(tx, type);
      if (replacesInOneStatement(objectType, deps.searchIndex)) knownTypes.set(typeKey, objectType);
      return ops(tx).replace(objectType, id, { data, expectedVersion, by: actor.userId });
    });
  }

  return {
    /** A query across types, newest first (resource-queries.ts). */
    query: queries.query,
    /** Groups of one type's resources with their metrics (resource-queries.ts). */
    aggregate: queries.aggregate,
    /** Applies an action declared on the resource's type (resource-actions.ts). */
    applyAction: (actor: Actor, input: ApplyActionInput) => applyAction({ db, objectTypes, workflows: deps.actionWorkflows, searchIndex: deps.searchIndex }, actor, input),
    async get(actor: Actor, type: string, id: string): Promise<Resource> {
      const key = isPascalName(type) ? (await db.inTenant(actor.tenantId, (tx) => objectTypes.find(tx, type)))?.key : type;
      const [resource] = key && isResourceId(id) ? await db.readInTenant(actor.tenantId, (tx) => selectResource(tx, key, id)) : [];
      if (!resource) throw new NotFoundError('resource');
      return resource;
    },

    list,

    /** Projects every resource of the type for search again, in the caller's transaction: its `searchFields` changed. */
    async reproject(tx: Tx, objectType: ObjectType): Promise<void> {
      const index = deps.searchIndex;
      if (!index) return;
      for (let after: string | null = null; ; ) {
        const page = await resourcesAfter(tx, objectType.key, after, REPROJECT_PAGE);
        for (const resource of page) {
          if (objectType.searchFields.length) await index.written(tx, objectType, resource);
          else await index.deleted(tx, objectType.key, resource.id);
        }
        if (page.length < REPROJECT_PAGE) return;
        after = page.at(-1)!.id;
      }
    },

    /** A page of a type's resources by page number (1-based) or cursor, newest first unless sorted otherwise. */
    async listPage(actor: Actor, input: ListResourcePageInput): Promise<ResourceListPage> {
      const page = input.page ?? 1;
      const result = await list(actor, {
        type: input.type,
        filter: {},
        where: input.where,
        sort: input.sort ?? '-created_at',
        limit: input.limit,
        offset: input.cursor ? undefined : (page - 1) * input.limit,
        cursor: input.cursor,
        count: input.count,
      });
      return { ...result, page, limit: input.limit };
    },

    /** Creates a resource; with `idempotencyKey`, a retry of the same request answers the first one's resource (idempotency-keys.ts). */
    async create(actor: Actor, type: string, data: ResourceData, idempotencyKey?: string): Promise<Resource> {
      return db.inTenant(actor.tenantId, (tx) =>
        idempotently(tx, actor, idempotencyKey, { operation: 'resources.create', input: { type, data } }, async () =>
          ops(tx).insert(await objectTypes.requireWritable(tx, type), data, actor.userId),
        ),
      );
    },

    /** Creates a resource under a caller-chosen id exactly once: a repeated call returns the first result. */
    async createOnce(actor: Actor, type: string, id: string, data: ResourceData): Promise<Resource> {
      return db.inTenant(actor.tenantId, async (tx) => {
        const resource = await ops(tx).insertOnce(await objectTypes.requireWritable(tx, type), id, data, actor.userId);
        if (!resource) throw new ConflictError(`resource ${id} exists with another type`);
        return resource;
      });
    },

    replace,

    /** Replaces the data only at the version the caller names (428 when it names none). */
    async replaceAtVersion(actor: Actor, input: ReplaceAtVersionInput): Promise<Resource> {
      if (input.version === undefined && input.ifMatch === undefined) throw new PreconditionRequiredError();
      return replace(actor, input.type, input.id, input.data, namedVersion(input.version, input.ifMatch));
    },

    /** Applies a JSON merge patch (RFC 7386) to the stored data. */
    async update(actor: Actor, type: string, id: string, patch: ResourceData, version?: number): Promise<Resource> {
      return db.inTenant(actor.tenantId, async (tx) =>
        ops(tx).write(await objectTypes.requireWritable(tx, type), id, { change: (current) => mergePatch(current.data, patch) as ResourceData, expectedVersion: version, by: actor.userId }),
      );
    },

    /** Deletes the resource; with `ifMatch`, only at that version. */
    async remove(actor: Actor, type: string, id: string, ifMatch?: IfMatch): Promise<void> {
      let withFiles = false;
      const deleted = await db.inTenant(actor.tenantId, async (tx) => {
        // A type the tenant does not have holds no resource to delete.
        const objectType = await objectTypes.find(tx, type);
        if (objectType) objectTypes.assertWritable(objectType);
        withFiles = !!objectType && Object.keys(objectType.fileProperties).length > 0;
        return ops(tx).delete(objectType?.key ?? type, id, { expectedVersion: namedVersion(undefined, ifMatch), by: actor.userId });
      });
      if (!deleted) throw new NotFoundError('resource');
      if (withFiles) await deps.removeFiles?.(actor.tenantId, [id]);
    },

    ...createResourceHistory(deps),
    ...createResourceBatches(deps),
  };
}
