import type { FieldKind } from './fields.ts';

/**
 * What the query machinery needs to know of a table it compiles filters, sorts and lists over:
 * the server-owned fields stored as columns, the JSON column that holds every other field, the
 * column naming each row's type, and the condition that confines a statement to the tenant.
 */
export interface QueryTable {
  name: string;
  /** The JSON column of the fields a type's schema declares (`data`). */
  dataColumn: string;
  typeColumn: string;
  /** Fields the server owns, by the name clients use: `createdAt` -> `created_at`; their columns are never null. */
  columns: Readonly<Record<string, { column: string; kind: FieldKind }>>;
  /**
   * The column naming each row's tenant. Statements compare it with the tenant they run for as a
   * bound value (row-level security confines them as well), so that the planner can use indexes
   * partial on one tenant.
   */
  tenantColumn: string;
}

/** The kind a field path has in the types a statement covers, or undefined when they do not say (or disagree). */
export type KindOf = (path: readonly string[]) => FieldKind | undefined;

/** Where field names resolve: a table, and the kinds its types' schemas declare. */
export interface FieldSource {
  table: QueryTable;
  kindOf: KindOf;
}
