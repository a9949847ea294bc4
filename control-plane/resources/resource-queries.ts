import type { Db } from '../db/client.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { ObjectTypesService } from '../object-types/object-types.service.ts';
import { compileAggregate, parseGroupBy, parseMetrics } from '../query/aggregate.ts';
import { fieldsOf } from '../query/fields.ts';
import { parseWhere } from '../query/filters.ts';
import { compileList } from '../query/list.ts';
import type { AggregateResourcesInput, AggregateResult, QueryResourcesInput, ResourceQueryPage } from './resource-queries.schema.ts';
import { runAggregate } from './resource-queries.repo.ts';
import { RESOURCE_TABLE } from './resource-table.ts';
import { readListPage } from './list-statements.ts';
import type { ListTotals } from './list-totals.ts';
import { RESOURCE_COLUMNS } from './resources.repo.ts';

const NEWEST_FIRST = [{ field: 'createdAt', desc: true }];

/**
 * Reads over resources beyond one type's list: a query across types and an aggregate of one
 * type. Both run in one transaction of the actor's tenant; field kinds come from the types' schemas.
 */
export function createResourceQueries(deps: { db: Db; objectTypes: ObjectTypesService; totals: ListTotals }) {
  const { db, objectTypes, totals } = deps;

  return {
    /**
     * Resources of several types (keys or PascalCase names; 404 naming an unknown one), newest
     * first, by cursor. A field's kind is the one every queried type's schema that declares it agrees on.
     */
    async query(actor: Actor, input: QueryResourcesInput): Promise<ResourceQueryPage> {
      const filters = input.where ? parseWhere(input.where) : [];
      return db.inTenant(actor.tenantId, async (tx) => {
        const types = new Map<string, object>();
        for (const name of input.types) {
          const objectType = await objectTypes.require(tx, name);
          types.set(objectType.key, objectType.schema);
        }
        // One order of the keys, so that a cursor holds whatever order the types were named in.
        const keys = [...types.keys()].sort();
        const statements = compileList(fieldsOf(RESOURCE_TABLE, keys.map((key) => types.get(key))), RESOURCE_COLUMNS, {
          tenantId: actor.tenantId,
          types: keys,
          filters,
          sortKeys: NEWEST_FIRST,
          limit: input.limit,
          cursor: input.cursor,
        });
        return readListPage(tx, totals, statements, input.limit, input.cursor);
      });
    },

    /** One row per group of a type's resources matching `where`, each with its metrics; at most `limit` groups. */
    async aggregate(actor: Actor, input: AggregateResourcesInput): Promise<AggregateResult> {
      const groupBy = parseGroupBy(input.groupBy);
      const metrics = parseMetrics(input.metrics);
      const filters = input.where ? parseWhere(input.where) : [];
      return db.inTenant(actor.tenantId, async (tx) => {
        const objectType = await objectTypes.require(tx, input.type);
        const statement = compileAggregate(fieldsOf(RESOURCE_TABLE, [objectType.schema]), { tenantId: actor.tenantId, types: [objectType.key], groupBy, metrics, filters, limit: input.limit });
        const rows = await runAggregate(tx, statement.sql);
        return { items: rows.slice(0, input.limit).map(statement.render), hasMore: rows.length > input.limit };
      });
    },
  };
}
