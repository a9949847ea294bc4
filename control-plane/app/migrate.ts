import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { syncDefaultRoles } from '../identity/default-roles.ts';
import type { Tx } from '../db/client.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../db/migrations/', import.meta.url));
const LOCK_KEY = 7_301_447_001;

/**
 * Applies every pending `migrations/NNNN_*.sql` file in order, each in its own transaction, then
 * brings the rows that copy the platform's code to it (every tenant's built-in roles: see
 * `syncDefaultRoles`), which no SQL file can know. Idempotent and safe to run from several
 * processes at once (an advisory lock serialises them). Returns the files it applied.
 */
export async function migrate(databaseUrl: string): Promise<string[]> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const applied: string[] = [];
  try {
    await sql`select pg_advisory_lock(${LOCK_KEY})`;
    await sql`create table if not exists schema_migrations (version text primary key, applied_at timestamptz not null default now())`;
    const done = new Set((await sql<{ version: string }[]>`select version from schema_migrations`).map((r) => r.version));
    const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
    for (const file of files) {
      if (done.has(file)) continue;
      const text = await readFile(MIGRATIONS_DIR + file, 'utf8');
      await sql.begin(async (tx) => {
        await tx.unsafe(text);
        await tx`insert into schema_migrations (version) values (${file})`;
      });
      applied.push(file);
    }
    await sql.begin((tx) => syncDefaultRoles(tx as unknown as Tx));
  } finally {
    await sql`select pg_advisory_unlock(${LOCK_KEY})`.catch(() => {});
    await sql.end({ timeout: 5 });
  }
  return applied;
}
