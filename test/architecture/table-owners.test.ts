import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PUBLISHED_VIEWS, TABLE_OWNERS } from '../../control-plane/db/table-owners.ts';

/** Every table and view the migrations create has an owner in control-plane/db/table-owners.ts. */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MIGRATIONS = 'control-plane/db/migrations';

/** The relations a migration's SQL creates (comments aside), and those it drops or renames away. */
export function createdRelations(sql: string): { tables: string[]; views: string[]; dropped: string[] } {
  const text = sql.replace(/--[^\n]*/g, ' ');
  const names = (pattern: RegExp) => [...text.matchAll(pattern)].map((m) => m[1]!.toLowerCase());
  return {
    tables: names(/\bcreate\s+(?:unlogged\s+)?table\s+(?:if\s+not\s+exists\s+)?(?:public\.)?"?(\w+)"?/gi),
    views: names(/\bcreate\s+(?:or\s+replace\s+)?(?:materialized\s+)?view\s+(?:if\s+not\s+exists\s+)?(?:public\.)?"?(\w+)"?/gi),
    dropped: names(/\bdrop\s+(?:table|view)\s+(?:if\s+exists\s+)?(?:public\.)?"?(\w+)"?/gi),
  };
}

const created = readdirSync(posix.join(ROOT, MIGRATIONS))
  .filter((file) => file.endsWith('.sql'))
  .sort()
  .reduce(
    (all, file) => {
      const found = createdRelations(readFileSync(posix.join(ROOT, MIGRATIONS, file), 'utf8'));
      found.tables.forEach((t) => all.tables.add(t));
      found.views.forEach((v) => all.views.add(v));
      found.dropped.forEach((d) => (all.tables.delete(d), all.views.delete(d)));
      return all;
    },
    { tables: new Set<string>(), views: new Set<string>() },
  );

describe('table owners', () => {
  it('reads the tables and views a migration creates', () => {
    expect(createdRelations('create table a (x int); create unlogged table if not exists b (); -- create table c\ncreate view d with (security_invoker = true) as select 1')).toEqual({
      tables: ['a', 'b'],
      views: ['d'],
      dropped: [],
    });
    expect(createdRelations('drop table if exists a;').dropped).toEqual(['a']);
    expect(created.tables.size).toBeGreaterThan(40);
  });

  it('names the owner of every table the migrations create, and no other', () => {
    const missing = [...created.tables].filter((table) => !(table in TABLE_OWNERS));
    expect(missing, 'add the new table to TABLE_OWNERS in control-plane/db/table-owners.ts with the folder of the domain that writes it').toEqual([]);
    expect(Object.keys(TABLE_OWNERS).filter((table) => !created.tables.has(table)), 'no migration creates these').toEqual([]);
  });

  it('names the publisher of every view the migrations create, and no other', () => {
    expect([...created.views].filter((view) => !(view in PUBLISHED_VIEWS)), 'add the view to PUBLISHED_VIEWS').toEqual([]);
    expect(Object.keys(PUBLISHED_VIEWS).filter((view) => !created.views.has(view)), 'no migration creates these').toEqual([]);
  });

  it('names owners that are folders of the repository', () => {
    const owners = new Set<string>([...Object.values(TABLE_OWNERS), ...Object.values(PUBLISHED_VIEWS)]);
    expect([...owners].filter((folder) => !existsSync(posix.join(ROOT, folder)))).toEqual([]);
  });

  it('has every published view created with security_invoker, so that the table’s row-level security applies to its readers', () => {
    const text = readdirSync(posix.join(ROOT, MIGRATIONS))
      .filter((file) => file.endsWith('.sql'))
      .map((file) => readFileSync(posix.join(ROOT, MIGRATIONS, file), 'utf8').replace(/--[^\n]*/g, ' '))
      .join('\n');
    const invokers = [...text.matchAll(/\bcreate\s+(?:or\s+replace\s+)?view\s+(\w+)\s+with\s*\(\s*security_invoker\s*=\s*true\s*\)/gi)].map((m) => m[1]);
    expect(Object.keys(PUBLISHED_VIEWS).filter((view) => !invokers.includes(view))).toEqual([]);
  });
});
