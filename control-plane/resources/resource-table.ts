import type { QueryTable } from '../query/table.ts';

/** The `resources` table as the query machinery sees it: every object type's rows, data in `data`. */
export const RESOURCE_TABLE: QueryTable = {
  name: 'resources',
  dataColumn: 'data',
  typeColumn: 'type',
  columns: {
    id: { column: 'id', kind: 'uuid' },
    createdAt: { column: 'created_at', kind: 'timestamp' },
    updatedAt: { column: 'updated_at', kind: 'timestamp' },
    version: { column: 'version', kind: 'number' },
    // v4 names the system timestamps as its clients send them.
    created_at: { column: 'created_at', kind: 'timestamp' },
    updated_at: { column: 'updated_at', kind: 'timestamp' },
  },
  tenantColumn: 'tenant_id',
};
