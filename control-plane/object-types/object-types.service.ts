import type { Db, Tx } from '../db/client.ts';
import { ConflictError, ForbiddenError, NotFoundError, SchemaIncompatibleError, ValidationError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { findClash, findObjectTypeById, findObjectTypeByName, insertObjectType, listObjectTypes, resourceDataOf, updateObjectType } from './object-types.repo.ts';
import {
  type IndexBuild,
  keyOf,
  ObjectTypeKeySchema,
  type CreateObjectTypeInput,
  type ObjectType,
  type ObjectTypeList,
  type UpdateObjectTypeInput,
} from './object-types.schema.ts';
import { schemaCheck, schemaProblem, validateAgainstSchema } from './schema-validator.ts';
import { assertIndexRoom, indexedFieldsOf } from './index-room.ts';

export type ObjectTypesService = ReturnType<typeof createObjectTypesService>;

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((item, i) => item === b[i]);

/** How many offending resource ids an incompatible schema change names. */
const NAMED_OFFENDERS = 10;

function assertCompilable(schema: object): void {
  const problem = schemaProblem(schema);
  if (problem) throw ValidationError.field('schema', `is not a valid JSON Schema: ${problem}`);
}

/**
 * Object types: the schema each resource type's data follows, what it declares beside it, and who
 * may write its resources. The transaction-taking functions let the resource engine read a type
 * in its own transaction.
 */
export function createObjectTypesService(deps: {
  db: Db;
  /** Called in the change's transaction when a type's `searchFields` change: its resources' search projection is rebuilt. */
  searchFieldsChanged?: (tx: Tx, objectType: ObjectType) => Promise<void>;
  /** The storage's index builds: started when a committed change declares indexes, and asked where a type's stand. */
  indexBuilds?: { request(tenantId: string): void; statuses(tenantId: string): Promise<(objectType: string) => IndexBuild> };
}) {
  const { db } = deps;

  /** The tenant's own types with where their declared indexes stand; a built-in type's are the migrations' (storage/builtin-indexes.ts). */
  async function withIndexBuilds(actor: Actor, types: readonly ObjectType[]): Promise<ObjectType[]> {
    if (!deps.indexBuilds || types.every((t) => t.builtIn)) return [...types];
    const of = await deps.indexBuilds.statuses(actor.tenantId);
    return types.map((t) => (t.builtIn ? t : { ...t, indexBuild: of(t.key) }));
  }

  /** After a change that may ask for other indexes has committed: builds them in the background; the type says where they stand. */
  async function building(actor: Actor, objectType: ObjectType, changed: boolean): Promise<ObjectType> {
    if (changed) deps.indexBuilds?.request(actor.tenantId);
    return (await withIndexBuilds(actor, [objectType]))[0]!;
  }

  /** The type by key or PascalCase name as the current tenant sees it; 404 when it has none. */
  async function require(tx: Tx, name: string): Promise<ObjectType> {
    const objectType = await findObjectTypeByName(tx, name);
    if (!objectType) throw new NotFoundError(`resource type "${name}"`);
    return objectType;
  }

  /** The type, when the resource routes may write its resources; 403 naming what writes them, 409 for a draft. */
  function assertWritable(objectType: ObjectType): ObjectType {
    if (objectType.writtenThrough) throw new ForbiddenError(`${objectType.key} resources are written only through ${objectType.writtenThrough}`);
    if (objectType.status !== 'published') throw new ConflictError(`${objectType.key} is a draft: publish it before writing its resources`);
    return objectType;
  }

  async function assertNoClash(tx: Tx, key: string, name: string, except?: string): Promise<void> {
    const clash = await findClash(tx, key, name, except);
    if (clash?.key === key) throw new ConflictError(`an object type with key "${key}" exists`, { field: 'key' });
    if (clash) throw new ConflictError(`an object type named "${clash.name}" exists`, { field: 'name' });
  }

  /**
   * Every stored resource of the type that `schema` would refuse, its file properties aside (the
   * platform's fields, which the schema does not describe): the first few ids, and how many.
   */
  async function offenders(tx: Tx, key: string, schema: object, fileProperties: readonly string[]): Promise<{ ids: string[]; total: number }> {
    const holds = schemaCheck(schema);
    const withoutFiles = (data: unknown) =>
      data !== null && typeof data === 'object' && fileProperties.length ? Object.fromEntries(Object.entries(data).filter(([name]) => !fileProperties.includes(name))) : data;
    const ids: string[] = [];
    let total = 0;
    for await (const rows of resourceDataOf(tx, key)) {
      for (const row of rows) {
        if (holds(withoutFiles(row.data))) continue;
        total++;
        if (ids.length < NAMED_OFFENDERS) ids.push(row.id);
      }
    }
    return { ids, total };
  }

  return {
    async list(actor: Actor): Promise<ObjectTypeList> {
      return { items: await withIndexBuilds(actor, await db.readInTenant(actor.tenantId, (tx) => listObjectTypes(tx))) };
    },

    /** The tenant's published types: what its resources may be written as. */
    async published(actor: Actor): Promise<ObjectTypeList> {
      const { items } = await this.list(actor);
      return { items: items.filter((t) => t.status === 'published') };
    },

    async get(actor: Actor, name: string): Promise<ObjectType> {
      return building(actor, await db.inTenant(actor.tenantId, (tx) => require(tx, name)), false);
    },

    /** Creates one of the tenant's own types; its key defaults to the kebab-case of its name. */
    async create(actor: Actor, input: CreateObjectTypeInput): Promise<ObjectType> {
      const key = input.key ?? keyOf(input.name);
      const checked = ObjectTypeKeySchema.safeParse(key);
      if (!checked.success) throw ValidationError.field('key', `${checked.error.issues[0]!.message} (derived from name; give key)`);
      assertCompilable(input.schema);
      return db
        .inTenant(actor.tenantId, async (tx) => {
          await assertNoClash(tx, key, input.name);
          await assertIndexRoom(tx, input);
          return insertObjectType(tx, key, input);
        })
        .then((created) => building(actor, created, indexedFieldsOf(created) > 0))
        .catch((error: unknown) => {
          // Another request created the same key or name between the check and the insert.
          const constraint = (error as { code?: string; constraint_name?: string }).code === '23505' ? (error as { constraint_name?: string }).constraint_name : undefined;
          if (constraint === 'object_types_tenant_name') throw new ConflictError(`an object type with key "${key}" exists`, { field: 'key' });
          if (constraint === 'object_types_tenant_pascal_name') throw new ConflictError(`an object type named "${input.name}" exists`, { field: 'name' });
          throw error;
        });
    },

    /**
     * Changes one of the tenant's own types. A new schema that a stored resource would not satisfy
     * is refused (409 SCHEMA_INCOMPATIBLE, naming up to 10 of them) and nothing changes.
     */
    async update(actor: Actor, input: UpdateObjectTypeInput): Promise<ObjectType> {
      const { changes } = input;
      if (changes.schema) assertCompilable(changes.schema);
      const updated = await db.inTenant(actor.tenantId, async (tx) => {
        const current = await findObjectTypeById(tx, input.objectTypeId, true);
        if (!current) {
          const visible = await findObjectTypeById(tx, input.objectTypeId);
          if (visible?.builtIn) throw new ForbiddenError(`${visible.key} is a built-in type and cannot be changed`);
          throw new NotFoundError('object type');
        }
        if (changes.name && changes.name !== current.name) await assertNoClash(tx, current.key, changes.name, current.objectTypeId);
        if (changes.schema || changes.fileProperties) {
          const fileProperties = Object.keys(changes.fileProperties ?? current.fileProperties);
          const { ids, total } = await offenders(tx, current.key, changes.schema ?? current.schema, fileProperties);
          if (total > 0) throw new SchemaIncompatibleError(current.key, ids, total);
        }
        if (changes.schema || changes.indexes) {
          await assertIndexRoom(tx, { schema: changes.schema ?? current.schema, indexes: changes.indexes ?? current.indexes }, current.objectTypeId);
        }
        const updated = await updateObjectType(tx, current.objectTypeId, changes);
        if (changes.searchFields && !sameList(changes.searchFields, current.searchFields)) await deps.searchFieldsChanged?.(tx, updated);
        return updated;
      });
      return building(actor, updated, !!(changes.schema || changes.indexes));
    },

    find: findObjectTypeByName,
    require,
    assertWritable,

    /** The type, when the resource routes may write its resources; 404, 403 or 409 otherwise. */
    async requireWritable(tx: Tx, name: string): Promise<ObjectType> {
      return assertWritable(await require(tx, name));
    },

    /**
     * Checks data against the type's schema: a ValidationError names the first offending field.
     * File properties are the platform's fields, described by their declaration, not the schema.
     */
    validate(objectType: ObjectType, data: Record<string, unknown>): void {
      const files = Object.keys(objectType.fileProperties);
      const checked = files.some((name) => Object.hasOwn(data, name)) ? Object.fromEntries(Object.entries(data).filter(([key]) => !files.includes(key))) : data;
      validateAgainstSchema(`${objectType.objectTypeId}@${objectType.version}`, objectType.schema, checked);
    },
  };
}
