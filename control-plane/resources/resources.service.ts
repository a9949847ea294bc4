import type { Db } from '../db/client.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { mergePatch } from '../json/merge-patch.ts';
import type { ObjectTypesService } from '../object-types/object-types.service.ts';
import { encodeCursor } from '../query/cursor.ts';
import { buildListStatements, type ListOptions } from './list-statements.ts';
import { resourceOps, type ResourceData } from './resource-ops.ts';
import { isResourceId, runListStatements, selectResource } from './resources.repo.ts';
import type { Resource, ResourcePage } from './resources.schema.ts';

export type ResourcesService = ReturnType<typeof createResourcesService>;

/** A PostgreSQL data exception (SQLSTATE class 22): a value that does not cast to its column's kind. */
const isDataException = (error: unknown) => /^22/.test(String((error as { code?: unknown })?.code ?? ''));

/** Generic CRUD and queries over typed resources; every call runs inside the actor's tenant. */
export function createResourcesService(deps: { db: Db; objectTypes: ObjectTypesService }) {
  const { db, objectTypes } = deps;
  const ops = (tx: Parameters<typeof resourceOps>[0]) => resourceOps(tx, objectTypes.validate);

  return {
    async get(actor: Actor, type: string, id: string): Promise<Resource> {
      const [resource] = isResourceId(id) ? await db.readInTenant(actor.tenantId, (tx) => selectResource(tx, type, id)) : [];
      if (!resource) throw new NotFoundError('resource');
      return resource;
    },

    async list(actor: Actor, options: ListOptions): Promise<ResourcePage> {
      return db.inTenant(actor.tenantId, async (tx) => {
        const objectType = await objectTypes.require(tx, options.type);
        const statements = buildListStatements(options, objectType.schema);
        const { rows, total } = await runListStatements(tx, statements.page, statements.count).catch((error: unknown) => {
          // Filter values are checked before binding; only a cursor's key values reach SQL unchecked.
          if (options.cursor && isDataException(error)) throw ValidationError.field('cursor', 'is not a valid cursor');
          throw error;
        });
        const hasMore = rows.length > options.limit;
        const page = hasMore ? rows.slice(0, options.limit) : rows;
        const last = page[page.length - 1];
        const nextCursor =
          hasMore && last ? encodeCursor(statements.fingerprint, statements.sort.keys.map((_, i) => last[`k${i}`] ?? null)) : null;
        const items = page.map(({ id, type, data, version, createdBy, createdAt, updatedAt }) => ({
          id,
          type,
          data,
          version,
          createdBy,
          createdAt,
          updatedAt,
        }));
        return { items, total, hasMore, nextCursor };
      });
    },

    async create(actor: Actor, type: string, data: ResourceData): Promise<Resource> {
      return db.inTenant(actor.tenantId, async (tx) => ops(tx).insert(await objectTypes.requireWritable(tx, type), data, actor.userId));
    },

    /** Creates a resource under a caller-chosen id exactly once: a repeated call returns the first result. */
    async createOnce(actor: Actor, type: string, id: string, data: ResourceData): Promise<Resource> {
      return db.inTenant(actor.tenantId, async (tx) => {
        const resource = await ops(tx).insertOnce(await objectTypes.requireWritable(tx, type), id, data, actor.userId);
        if (!resource) throw new ConflictError(`resource ${id} exists with another type`);
        return resource;
      });
    },

    async replace(actor: Actor, type: string, id: string, data: ResourceData, version?: number): Promise<Resource> {
      return db.inTenant(actor.tenantId, async (tx) => ops(tx).write(await objectTypes.requireWritable(tx, type), id, () => data, version));
    },

    /** Applies a JSON merge patch (RFC 7386) to the stored data. */
    async update(actor: Actor, type: string, id: string, patch: ResourceData, version?: number): Promise<Resource> {
      return db.inTenant(actor.tenantId, async (tx) =>
        ops(tx).write(await objectTypes.requireWritable(tx, type), id, (current) => mergePatch(current.data, patch) as ResourceData, version),
      );
    },

    async remove(actor: Actor, type: string, id: string): Promise<void> {
      const deleted = await db.inTenant(actor.tenantId, async (tx) => {
        // A type the tenant does not have holds no resource to delete.
        const objectType = await objectTypes.find(tx, type);
        if (objectType) objectTypes.assertWritable(objectType);
        return ops(tx).delete(type, id);
      });
      if (!deleted) throw new NotFoundError('resource');
    },
  };
}
