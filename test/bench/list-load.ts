import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunningPlatform } from '../../control-plane/app/platform.ts';
import { loadProjects, waitUntilIdle, withSql } from './bench-db.ts';
import { table } from './report.ts';
import type { Settings } from './settings.ts';
import { PLATFORM_APP } from './statements.ts';
import { runWrk } from './wrk.ts';

/** The wrk script that reads a list and, in one request of `WRITE_EVERY`, creates a resource of its type. */
export const LIST_WRITES_SCRIPT = fileURLToPath(new URL('./list-writes.lua', import.meta.url));
export const WRITE_EVERY = 10;

/** The body of a create of a project-shaped resource, as v3 (the fields) or v4 (`{data}`) takes it; answers the file's path. */
export async function writeBody(workDir: string, api: 'v3' | 'v4'): Promise<string> {
  const fields = { name: 'bench write', status: 'active', budget: 5000 };
  const file = join(workDir, `write-${api}.json`);
  await writeFile(file, JSON.stringify(api === 'v3' ? fields : { data: fields }));
  return file;
}

const SMALL_TENANTS = 1_000;
const SMALL_TENANT_ROWS = 20;

/**
 * The list's cost curve: its rate and latency at 10k, 100k (and, `withMillion`, 1M) projects of
 * tenant `slug`, with 1 000 small tenants of 20 projects each beside it. The tenant's projects are
 * replaced first; each step adds rows to reach the next size. Prints the table and p50 at the
 * largest size over p50 at 10k (target <= 2).
 */
export async function costCurve(options: {
  dbUrl: string;
  platform: RunningPlatform;
  token: string;
  slug: string;
  /** The list's path, as the edge serves it. */
  listPath: string;
  wrk: string;
  settings: Settings;
  workDir: string;
  log: (message: string) => void;
  withMillion: boolean;
}): Promise<void> {
  const { dbUrl, log, settings } = options;
  log(`cost curve: ${SMALL_TENANTS} small tenants of ${SMALL_TENANT_ROWS} projects, and the list's tenant emptied`);
  await withSql(dbUrl, async (sql) => {
    await sql`set session_replication_role = replica`;
    await sql`delete from resources where type = 'project' and tenant_id = (select id from tenants where slug = ${options.slug})`;
    await sql`insert into tenants (slug, name, home_region) select 'curve-' || g, 'Curve ' || g, 'eu' from generate_series(1, ${SMALL_TENANTS}::int) g on conflict do nothing`;
    await sql`
      insert into resources (tenant_id, type, data)
      select t.id, 'project', jsonb_build_object('name', 'Small ' || g, 'status', (array['active', 'completed'])[1 + g % 2], 'budget', 100 * g)
      from tenants t, generate_series(1, ${SMALL_TENANT_ROWS}::int) g where t.slug like 'curve-%'`;
  });
  const pathsFile = join(options.workDir, 'curve-paths.txt');
  await writeFile(pathsFile, `${options.listPath}\n`);
  const sizes = options.withMillion ? [10_000, 100_000, 1_000_000] : [10_000, 100_000];
  const rows: string[][] = [];
  const p50s: number[] = [];
  let loaded = 0;
  for (const size of sizes) {
    log(`cost curve: loading the tenant to ${size} projects`);
    await loadProjects(dbUrl, options.slug, size - loaded);
    loaded = size;
    const run = async (seconds: number) => {
      const result = await runWrk(options.wrk, { url: options.platform.url, token: options.token, pathsFile, connections: settings.connections, threads: settings.threads, seconds });
      await waitUntilIdle(dbUrl, PLATFORM_APP);
      return result;
    };
    await run(Math.max(1, Math.min(settings.warmupSeconds, 3)));
    const result = await run(Math.max(2, Math.min(settings.seconds, 10)));
    p50s.push(result.p50Ms);
    rows.push([String(size), result.rate.toFixed(1), result.p50Ms.toFixed(2), result.p99Ms.toFixed(2), String(result.errors)]);
  }
  console.log(`\n-- cost curve of the list (one tenant's projects, ${SMALL_TENANTS} small tenants beside it)`);
  console.log(table(['rows of the tenant', 'req/s', 'p50 ms', 'p99 ms', 'errors'], rows));
  const growth = p50s[p50s.length - 1]! / p50s[0]!;
  console.log(`p50 at ${sizes[sizes.length - 1]} / p50 at ${sizes[0]}: ${growth.toFixed(2)} (<= 2: ${growth <= 2 ? 'PASS' : 'MISS'})`);
}
