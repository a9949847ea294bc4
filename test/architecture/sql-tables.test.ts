import { describe, expect, it } from 'vitest';
import { refusedUses, sqlTextsOf, tableUses } from './sql-tables.ts';

/** The checker the boundary test runs over every domain's SQL, on small examples. */

const KNOWN = new Set(['tenants', 'memberships', 'resources', 'resource_versions', 'tenant_directory']);
const ownership = {
  owners: { tenants: 'control-plane/tenants', memberships: 'control-plane/tenants', resources: 'control-plane/resources', resource_versions: 'control-plane/resources' },
  views: { tenant_directory: 'control-plane/tenants' },
  allowedReads: { 'control-plane/storage/storage.repo.ts resources': 'a reason' },
};

describe('sql table uses', () => {
  it('finds writes after INSERT INTO, UPDATE, DELETE FROM, MERGE INTO, COPY and TRUNCATE', () => {
    expect(tableUses('insert into tenants (slug) values ($1)', KNOWN)).toEqual([{ table: 'tenants', kind: 'write' }]);
    expect(tableUses('UPDATE public.tenants SET plan = $1', KNOWN)).toEqual([{ table: 'tenants', kind: 'write' }]);
    expect(tableUses('delete from only "resources" where id = $1', KNOWN)).toEqual([{ table: 'resources', kind: 'write' }]);
    expect(tableUses('merge into memberships m using tenants t on t.id = m.tenant_id when matched then delete', KNOWN)).toEqual([
      { table: 'memberships', kind: 'write' },
      { table: 'tenants', kind: 'read' },
    ]);
    expect(tableUses('copy resources from stdin', KNOWN)).toEqual([{ table: 'resources', kind: 'write' }]);
    expect(tableUses('truncate table tenants', KNOWN)).toEqual([{ table: 'tenants', kind: 'write' }]);
  });

  it('finds reads after FROM, JOIN and USING, and a write’s own FROM is no read', () => {
    expect(tableUses('select m.roles from memberships m join tenants t on t.id = m.tenant_id', KNOWN)).toEqual([
      { table: 'memberships', kind: 'read' },
      { table: 'tenants', kind: 'read' },
    ]);
    expect(tableUses('delete from resources r using tenants t where t.id = r.tenant_id', KNOWN)).toEqual([
      { table: 'resources', kind: 'write' },
      { table: 'tenants', kind: 'read' },
    ]);
    expect(tableUses('insert into resource_versions (id) select id from resources', KNOWN)).toEqual([
      { table: 'resource_versions', kind: 'write' },
      { table: 'resources', kind: 'read' },
    ]);
  });

  it('takes no lock, conflict clause, quoted string, comment or unknown name for a table', () => {
    expect(tableUses('select id from tenant_directory where id = $1 for update', KNOWN)).toEqual([{ table: 'tenant_directory', kind: 'read' }]);
    expect(tableUses('insert into tenants (slug) values ($1) on conflict (slug) do update set name = excluded.name', KNOWN)).toEqual([{ table: 'tenants', kind: 'write' }]);
    expect(tableUses("select 'from tenants' as note, extract(epoch from now()) from widgets -- join resources", KNOWN)).toEqual([]);
  });

  it('reads SQL from tagged templates and statement-like strings, never from other literals or through ${…}', () => {
    const source = [
      'const a = tx`select 1 from tenants where id = ${id}`;',
      "const b = 'delete from resources where id = $1';",
      'const c = `update memberships set roles = $1`;',
      "const d = 'Moved from tenants to somewhere';",
      'const e = tx`select * from ${table}`;',
      'const f = sql`insert into ${tx(table)} ${tx(values)}`;',
    ].join('\n');
    const texts = sqlTextsOf('x.ts', source);
    expect(texts).toHaveLength(5);
    expect(texts.flatMap((sql) => tableUses(sql, KNOWN))).toEqual([
      { table: 'tenants', kind: 'read' },
      { table: 'resources', kind: 'write' },
      { table: 'memberships', kind: 'write' },
    ]);
  });

  it('refuses another domain’s table: any write, and a read except through a published view or a listed reason', () => {
    const refused = (file: string, sql: string) => refusedUses(file, [sql], ownership);
    expect(refused('control-plane/tenants/tenants.repo.ts', 'update tenants set plan = $1')).toEqual([]);
    expect(refused('control-plane/capabilities/capabilities.repo.ts', 'update tenants set plan = $1')).toEqual([
      'control-plane/capabilities/capabilities.repo.ts: write tenants (control-plane/tenants)',
    ]);
    expect(refused('control-plane/capabilities/capabilities.repo.ts', 'select plan from tenants')).toEqual([
      'control-plane/capabilities/capabilities.repo.ts: read tenants (control-plane/tenants)',
    ]);
    expect(refused('control-plane/capabilities/capabilities.repo.ts', 'select plan from tenant_directory')).toEqual([]);
    expect(refused('control-plane/capabilities/capabilities.repo.ts', 'update tenant_directory set plan = $1')).toEqual([
      'control-plane/capabilities/capabilities.repo.ts: write tenant_directory (control-plane/tenants)',
    ]);
    expect(refused('control-plane/storage/storage.repo.ts', 'select count(*) from resources')).toEqual([]);
    expect(refused('control-plane/storage/storage.repo.ts', 'delete from resources')).toEqual(['control-plane/storage/storage.repo.ts: write resources (control-plane/resources)']);
  });
});
