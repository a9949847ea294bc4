import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_ROLES } from '../auth/permissions.ts';
import { migrate } from './migrate.ts';

/** What `migrate` does beyond the SQL files, against the run's (already migrated) PostgreSQL. */
describe('migrate', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  afterAll(() => sql.end({ timeout: 5 }));

  async function rolesOf(tenantId: string): Promise<Map<string, { permissions: string[]; version: string }>> {
    const rows = await sql<{ name: string; permissions: string[]; version: string }[]>`
      select name, array(select p from unnest(permissions) p order by p) as permissions, xmin::text as version
      from roles where tenant_id = ${tenantId}::uuid`;
    return new Map(rows.map((r) => [r.name, { permissions: r.permissions, version: r.version }]));
  }

  it("brings every tenant's built-in roles to the platform's permissions, leaves custom roles alone, and changes nothing when run again", async () => {
    const slug = `roles-${randomUUID().slice(0, 8)}`;
    const [tenant] = await sql<{ id: string }[]>`insert into tenants (slug, name, home_region) values (${slug}, ${slug}, 'eu') returning id::text as id`;
    const tenantId = tenant!.id;
    // As an older platform left the tenant: `member` without a permission added since, `tenant-admin`
    // with one since withdrawn, no `admin` role at all; and two roles of the tenant's own.
    const older = DEFAULT_ROLES.member!.filter((p) => p !== 'documents.read');
    await sql`insert into roles (tenant_id, name, permissions) values
      (${tenantId}::uuid, 'member', ${older as string[]}),
      (${tenantId}::uuid, 'tenant-admin', ${[...DEFAULT_ROLES['tenant-admin']!, 'reports.export'] as string[]}),
      (${tenantId}::uuid, 'auditor', ${['resources.read', 'reports.export']}),
      (${tenantId}::uuid, 'editor', ${['resources.read']})`;
    const custom = await rolesOf(tenantId);

    expect(await migrate(inject('databaseUrl'))).toEqual([]);
    const synced = await rolesOf(tenantId);
    for (const [name, permissions] of Object.entries(DEFAULT_ROLES)) {
      expect(synced.get(name)?.permissions, name).toEqual([...permissions].sort());
    }
    expect(synced.get('member')!.permissions).toContain('documents.read');
    expect(synced.get('tenant-admin')!.permissions).not.toContain('reports.export');
    expect(synced.get('auditor')).toEqual(custom.get('auditor'));
    expect(synced.get('editor')).toEqual(custom.get('editor'));
    expect([...synced.keys()].sort()).toEqual(['admin', 'auditor', 'editor', 'member', 'tenant-admin']);

    await migrate(inject('databaseUrl'));
    // No row was written again: each keeps the version (xmin) the first run gave it.
    expect(await rolesOf(tenantId)).toEqual(synced);
  });
});
