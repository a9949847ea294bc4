import type { Db, Tx } from '../db/client.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { findObjectTypeByName, listObjectTypes } from './object-types.repo.ts';
import type { ObjectType, ObjectTypeList } from './object-types.schema.ts';
import { validateAgainstSchema } from './schema-validator.ts';

export type ObjectTypesService = ReturnType<typeof createObjectTypesService>;

/**
 * Object types: the schema each resource type's data follows, and who may write it. The
 * transaction-taking functions let the resource engine read a type in its own transaction.
 */
export function createObjectTypesService(deps: { db: Db }) {
  const { db } = deps;

  /** The type by name as the current tenant sees it; 404 when it has none. */
  async function require(tx: Tx, name: string): Promise<ObjectType> {
    const objectType = await findObjectTypeByName(tx, name);
    if (!objectType) throw new NotFoundError(`resource type "${name}"`);
    return objectType;
  }

  /** The type, when the resource routes may write its resources; 403 naming what writes them otherwise. */
  function assertWritable(objectType: ObjectType): ObjectType {
    if (objectType.writtenThrough) throw new ForbiddenError(`${objectType.name} resources are written only through ${objectType.writtenThrough}`);
    return objectType;
  }

  return {
    async list(actor: Actor): Promise<ObjectTypeList> {
      return { items: [...(await db.readInTenant(actor.tenantId, (tx) => listObjectTypes(tx)))] };
    },

    async get(actor: Actor, name: string): Promise<ObjectType> {
      return db.inTenant(actor.tenantId, (tx) => require(tx, name));
    },

    find: findObjectTypeByName,
    require,

    assertWritable,

    /** The type, when the resource routes may write its resources; 404 or 403 otherwise. */
    async requireWritable(tx: Tx, name: string): Promise<ObjectType> {
      return assertWritable(await require(tx, name));
    },

    /** Checks data against the type's schema: a ValidationError names the first offending field. */
    validate(objectType: ObjectType, data: Record<string, unknown>): void {
      validateAgainstSchema(`${objectType.id}@${objectType.version}`, objectType.schema, data);
    },
  };
}
