import { createHash } from 'node:crypto';
import { fieldsOf, resolveField } from '../query/fields.ts';
import { RESOURCE_TABLE } from '../resources/resource-table.ts';

/**
 * The indexes that serve a built-in type's declared fields: one per field, shared by every tenant
 * (`(tenant_id, <field>, id) where type = '<key>'`), so that a thousand tenants add no index each.
 * Migrations create them; `builtin-indexes.test.ts` checks that each migration statement is the one
 * this function makes, with the field's expression exactly as the query engine compiles it.
 */
export function builtInIndexStatements(key: string, schema: object, fields: readonly string[]): string[] {
  const statements: string[] = [];
  for (const field of fields) {
    const { expr } = resolveField(field, fieldsOf(RESOURCE_TABLE, [schema]), () => 'json', 'indexes');
    const name = `resources_b_${key.replace(/-/g, '_')}_${field.replace(/\W/g, '_').toLowerCase()}`;
    statements.push(`create index if not exists ${name} on resources (tenant_id, ${expr}, id) where type = '${key}';`);
    // The planner ignores a partial index's own statistics: these let it estimate filters and totals.
    statements.push(`create statistics if not exists resources_bs_${createHash('sha256').update(expr).digest('hex').slice(0, 16)} on (${expr}) from resources;`);
  }
  return statements;
}
