import type { Db, Tx } from '../db/client.ts';
import { APP_OBJECT_TYPE } from '../apps/apps.schema.ts';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError, VersionConflictError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { findObjectTypeByName, type ObjectTypeRow } from '../object-types/object-types.repo.ts';
import { validateAgainstSchema } from '../object-types/schema-validator.ts';
import { mergePatch } from '../json/merge-patch.ts';
import { encodeCursor } from '../query/cursor.ts';
import { buildListStatements, type ListOptions } from './list-statements.ts';
import { deleteResource, findResource, insertResource, insertResourceOnce, isResourceId, runListStatements, selectResource, writeResourceData } from './resources.repo.ts';
import type { Resource, ResourcePage } from './resources.schema.ts';

export type ResourcesService = ReturnType<typeof createResourcesService>;

/** A PostgreSQL data exception (SQLSTATE class 22): a value that does not cast to its column's kind. */
const isDataException = (error: unknown) => /^22/.test(String((error as { code?: unknown })?.code ?? ''));

/**
 * Built-in types that only their own service writes, and what writes them: the resource routes
 * read them, but a write there would bypass that service's rules (an enrollment names the child
 * tenant that deleting the app soft-deletes).
 */
const WRITTEN_ELSEWHERE: ReadonlyMap<string, string> = new Map([[APP_OBJECT_TYPE, 'the apps API or an App object']]);

function assertWritable(type: string): void {
  const writer = WRITTEN_ELSEWHERE.get(type);
  if (writer) throw new ForbiddenError(`${type} resources are written only through ${writer}`);
}

/** Generic CRUD and queries over typed resources; every call runs inside the actor's tenant. */
export function createResourcesService(deps: { db: Db }) {
  const { db } = deps;

  async function requireType(tx: Tx, type: string): Promise<ObjectTypeRow> {
    const objectType = await findObjectTypeByName(tx, type);
    if (!objectType) throw new NotFoundError(`resource type "${type}"`);
    return objectType;
  }

  function validate(objectType: ObjectTypeRow, data: Record<string, unknown>): void {
    validateAgainstSchema(`${objectType.id}@${objectType.version}`, objectType.schema, data);
  }

  return {
    async get(actor: Actor, type: string, id: string): Promise<Resource> {
      const [resource] = isResourceId(id) ? await db.readInTenant(actor.tenantId, (tx) => selectResource(tx, type, id)) : [];
      if (!resource) throw new NotFoundError('resource');
      return resource;
    },

    async list(actor: Actor, options: ListOptions): Promise<ResourcePage> {
      return db.inTenant(actor.tenantId, async (tx) => {
        const objectType = await requireType(tx, options.type);
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

    async create(actor: Actor, type: string, data: Record<string, unknown>): Promise<Resource> {
      assertWritable(type);
      return db.inTenant(actor.tenantId, async (tx) => {
        validate(await requireType(tx, type), data);
        return insertResource(tx, type, data, actor.userId);
      });
    },

    /** Creates a resource under a caller-chosen id exactly once: a repeated call returns the first result. */
    async createOnce(actor: Actor, type: string, id: string, data: Record<string, unknown>): Promise<Resource> {
      assertWritable(type);
      return db.inTenant(actor.tenantId, async (tx) => {
        validate(await requireType(tx, type), data);
        const resource = await insertResourceOnce(tx, id, type, data, actor.userId);
        if (!resource) throw new ConflictError(`resource ${id} exists with another type`);
        return resource;
      });
    },

    async replace(actor: Actor, type: string, id: string, data: Record<string, unknown>, version?: number): Promise<Resource> {
      assertWritable(type);
      return db.inTenant(actor.tenantId, async (tx) => {
        const objectType = await requireType(tx, type);
        const current = await findResource(tx, type, id, true);
        if (!current) throw new NotFoundError('resource');
        if (version !== undefined && current.version !== version) throw new VersionConflictError(version, current.version);
        validate(objectType, data);
        return (await writeResourceData(tx, type, id, data, version))!;
      });
    },

    async update(actor: Actor, type: string, id: string, patch: Record<string, unknown>, version?: number): Promise<Resource> {
      assertWritable(type);
      return db.inTenant(actor.tenantId, async (tx) => {
        const objectType = await requireType(tx, type);
        const current = await findResource(tx, type, id, true);
        if (!current) throw new NotFoundError('resource');
        if (version !== undefined && current.version !== version) throw new VersionConflictError(version, current.version);
        const data = mergePatch(current.data, patch) as Record<string, unknown>;
        validate(objectType, data);
        return (await writeResourceData(tx, type, id, data, version))!;
      });
    },

    async remove(actor: Actor, type: string, id: string): Promise<void> {
      assertWritable(type);
      const deleted = await db.inTenant(actor.tenantId, (tx) => deleteResource(tx, type, id));
      if (!deleted) throw new NotFoundError('resource');
    },
  };
}
