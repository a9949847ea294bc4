import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrate } from '../../control-plane/app/migrate.ts';
import { ensureTenantLogin } from '../../control-plane/db/tenant-login.ts';
import { bunExecutable } from '../../scripts/stack/bun.ts';
import { createDatabase, dropDatabase } from '../../scripts/stack/postgres.ts';
import { freePort } from '../../scripts/stack/process.ts';
import { killProcessGroup } from '../harness/process-group.ts';
import { until } from '../harness/until.ts';
import { tourBlocks } from './markdown-tour.ts';
import { disagreement, runBlock } from './tour-runner.ts';

/**
 * The guides' commands, run as written against the platform started as `npm start` starts it
 * (`bun scripts/start.ts`, with a database, state directory and port of its own), so that the
 * guides cannot drift from the product. Each shell block carries its expectation in an HTML
 * comment above it (test/docs/markdown-tour.ts); the blocks of a guide run in order in one shell
 * session (the variables one block sets, the next one reads), with `http://localhost:8080` meaning
 * this platform. A failure names the block's line in the guide.
 */

const GUIDES = ['README.md', 'docs/getting-started.md'];

describe('the guides\' shell blocks', () => {
  it.each(GUIDES)('%s: every shell block says what the tour expects of it (or why it is not run)', (guide) => {
    const unmarked = tourBlocks(guide).filter((block) => !block.expect).map((block) => `${block.file}:${block.line}`);
    expect(unmarked, 'add <!-- expect: ... --> or <!-- not run: ... --> above these blocks').toEqual([]);
  });
});

describe('the tour of README.md and docs/getting-started.md, run against `npm start`', { timeout: 180_000 }, () => {
  let work: string;
  let platform: ChildProcess;
  let origin: string;
  let adminUrl: string;
  const database = `svc_test_${process.pid}_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'svc-tour-'));
    mkdirSync(join(work, 'home'));
    // A database of its own: the tour creates types and tenants under fixed names.
    const runUrl = new URL(inject('databaseUrl'));
    adminUrl = Object.assign(new URL(runUrl), { pathname: '/postgres' }).toString();
    const databaseUrl = await createDatabase(adminUrl, database);
    const port = await freePort();
    origin = `http://localhost:${port}`;
    platform = spawn(bunExecutable(), ['scripts/start.ts'], {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        TENANT_DATABASE_URL: await tenantLoginAfterMigrations(databaseUrl),
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        TEMPORAL_TASK_QUEUE: `tour-${randomUUID()}`,
        SVC_STATE_DIR: join(work, 'state'),
        KUBECONFIG: join(work, 'no-kubeconfig'),
        PORT: String(port),
        HOST: '127.0.0.1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    platform.stdout!.on('data', (chunk) => (output += chunk));
    platform.stderr!.on('data', (chunk) => (output += chunk));
    await until(async () => output.includes('platform ready on') || platform.exitCode !== null, (done) => done, 120_000);
    if (!output.includes('platform ready on')) throw new Error(`the platform did not start:\n${output}`);
  });

  afterAll(async () => {
    if (platform) killProcessGroup(platform);
    if (platform?.exitCode === null) await once(platform, 'exit');
    await dropDatabase(adminUrl, database).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  });

  const runnable = GUIDES.flatMap((guide) => tourBlocks(guide)).filter((block) => block.expect?.run);
  it.each(runnable.map((block, index) => [`${block.file}:${block.line}`, block, index] as const))('%s', async (_where, block, index) => {
    const run = await runBlock(block, index, {
      origin,
      work,
      env: { PATH: process.env.PATH, HOME: join(work, 'home'), TMPDIR: process.env.TMPDIR ?? tmpdir(), SVC_URL: origin, NO_COLOR: '1' },
    });
    const problem = disagreement(block, run);
    if (problem) throw new Error(problem);
  });
});

/** The tenant connections' login (as `npm start` makes on its own cluster), after the migrations that make its role. */
async function tenantLoginAfterMigrations(databaseUrl: string): Promise<string> {
  await migrate(databaseUrl);
  return ensureTenantLogin(databaseUrl);
}
