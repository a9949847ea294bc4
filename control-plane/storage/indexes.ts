import { createHash } from 'node:crypto';
import { fieldsOf, resolveField } from '../query/fields.ts';
import { indexedPaths, type JsonSchemaNode } from '../object-types/indexed-fields.ts';
import { RESOURCE_TABLE } from '../resources/resource-table.ts';

/** Longest text a `maxLength` may allow for a field to be indexed: its values must fit a btree entry (about 2.7 kB). */
export const MAX_INDEXED_TEXT_LENGTH = 500;

/** An expression index on `resources` serving one object type's field. */
export interface IndexSpec {
  /** `resources_x_<hash of type, method and expression>`: the same request always gets the same name. */
  name: string;
  objectType: string;
  field: string;
  /** The query engine's SQL expression of the field, so that its filters and sorts can use the index. */
  expression: string;
  /** `create index concurrently if not exists ...`. */
  definition: string;
  /**
   * Statistics of the expression over the whole table (`resources_s_<hash of the expression>`,
   * shared by every tenant and type using it): the planner ignores a partial index's own
   * statistics, and without these it guesses how many rows a filter on the field keeps.
   */
  statistics?: { name: string; definition: string };
}

export interface SkippedField {
  objectType: string;
  field: string;
  reason: string;
}

function nodeAt(schema: JsonSchemaNode | undefined, path: string[]): JsonSchemaNode | undefined {
  return path.reduce<JsonSchemaNode | undefined>((node, segment) => node?.properties?.[segment], schema);
}

const quoteLiteral = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** The name of the statistics of an indexed expression, shared by every tenant and type indexing it. */
export const statisticsName = (expression: string) => `resources_s_${createHash('sha256').update(expression).digest('hex').slice(0, 16)}`;

function statisticsOf(expression: string): { name: string; definition: string } {
  const name = statisticsName(expression);
  return { name, definition: `create statistics if not exists ${name} on (${expression}) from resources` };
}

function specOf(tenantId: string, objectType: string, field: string, expression: string, method: 'btree' | 'gin' | 'hash'): IndexSpec {
  const name = `resources_x_${createHash('sha256').update(`${tenantId}\n${objectType}\n${method}\n${expression}`).digest('hex').slice(0, 16)}`;
  const columns = method === 'btree' ? `(${expression}, id)` : `using ${method} (${expression})`;
  return {
    name,
    objectType,
    field,
    expression,
    definition: `create index concurrently if not exists ${name} on resources ${columns} where tenant_id = ${quoteLiteral(tenantId)}::uuid and type = ${quoteLiteral(objectType)}`,
    ...(method !== 'gin' ? { statistics: statisticsOf(expression) } : {}),
  };
}

/**
 * The indexes that a tenant's object types ask for (their `indexes`, and fields their schema marks
 * `x-indexed`). Each is partial on the tenant and the type, so that it holds that tenant's rows
 * only: another tenant's type of the same key neither pays for it on writes nor can fail a write
 * with a value too long for it. Its key is the field's expression exactly as `query/fields.ts`
 * builds it, then id (the sort tiebreaker), so that the resource engine's filters, sorts and
 * keyset pages on the field can use it; array fields get a GIN index for `contains`, and text
 * without a `maxLength` that fits a btree entry a hash index for equality. Fields that cannot be
 * indexed (objects, fields of no declared type) are returned with the reason.
 */
export function indexSpecs(
  tenantId: string,
  types: ReadonlyArray<{ name: string; schema: object; indexes?: readonly string[] }>,
): { specs: IndexSpec[]; skipped: SkippedField[] } {
  const specs: IndexSpec[] = [];
  const skipped: SkippedField[] = [];
  for (const { name: objectType, schema, indexes = [] } of types) {
    // Fields the type declares in `indexes`, and fields its schema marks `x-indexed`, each once.
    const paths = new Map([...indexes.map((field) => field.split('.')), ...indexedPaths(schema as JsonSchemaNode)].map((path) => [path.join('.'), path]));
    for (const path of paths.values()) {
      const field = path.join('.');
      const skip = (reason: string) => skipped.push({ objectType, field, reason });
      let ref;
      try {
        ref = resolveField(field, fieldsOf(RESOURCE_TABLE, [schema]), () => 'json', 'x-indexed');
      } catch {
        skip('is not a field name that filters and sorts accept');
        continue;
      }
      const node = nodeAt(schema, path);
      switch (ref.kind) {
        case 'text':
          // A value longer than a btree entry holds would fail its write: a hash index holds any length, for equality.
          specs.push(specOf(tenantId, objectType, field, ref.expr, typeof node?.maxLength === 'number' && node.maxLength <= MAX_INDEXED_TEXT_LENGTH ? 'btree' : 'hash'));
          break;
        case 'number':
          specs.push(specOf(tenantId, objectType, field, ref.expr, 'btree'));
          break;
        case 'array':
          specs.push(specOf(tenantId, objectType, field, ref.expr, 'gin'));
          break;
        case 'boolean':
          specs.push(specOf(tenantId, objectType, field, ref.expr, 'btree'));
          break;
        case 'timestamp':
          specs.push(specOf(tenantId, objectType, field, ref.expr, 'btree'));
          break;
        default:
          skip(node?.type === 'object' ? 'an object cannot be indexed; mark its fields instead' : 'declares no indexable type');
      }
    }
  }
  return { specs, skipped };
}
