import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestStack, type TestStack } from '../harness/stack.ts';
import { normalise, svc } from './svc.ts';

/** `svc resources ...` against the running platform, as a script would run it (no terminal). */
describe('svc resources', { timeout: 90_000 }, () => {
  let stack: TestStack;
  let home: string;
  let env: Record<string, string>;
  let acme: string;
  /** A tag of this run, so that a list filtered by name sees only this run's resources. */
  const run = randomUUID().slice(0, 8);
  const tagged = (text: string) => normalise(text).replaceAll(run, '<run>');

  beforeAll(async () => {
    stack = await startTestStack();
    home = await mkdtemp(join(tmpdir(), 'svc-home-'));
    env = { HOME: home, SVC_TOKEN: await stack.token(ADMIN), BASE_URL_PUBLIC_API: stack.url };
    acme = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: any) => t.slug === 'acme').id;
  });
  afterAll(async () => {
    await stack?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('queries across types and aggregates a type through the platform, printing what it returned', async () => {
    for (const budget of [100, 250]) {
      const created = await svc(['resources', 'create', 'project', '--tenant-id', acme, '--data', JSON.stringify({ name: `Query ${run}`, status: `q-${run}`, budget }), '--format', 'json'], env);
      expect(created.exitCode, created.stderr).toBe(0);
    }
    const where = JSON.stringify({ status: `q-${run}` });
    const queried = await svc(['resources', 'query', '--tenant-id', acme, '--types', 'project', '--where', where, '--format', 'json'], env);
    expect(queried.exitCode, queried.stderr).toBe(0);
    expect(queried.json).toMatchObject({ total: 2, hasMore: false });
    expect(queried.json.data.map((r: any) => r.data.budget)).toEqual([250, 100]);
    const aggregated = await svc(
      ['resources', 'aggregate', 'project', '--tenant-id', acme, '--group-by', 'status', '--metrics', '{"n":{"count":"*"},"total":{"sum":"budget"}}', '--where', where, '--format', 'json'],
      env,
    );
    expect(aggregated.exitCode, aggregated.stderr).toBe(0);
    expect(aggregated.json.data).toEqual([{ status: `q-${run}`, n: 2, total: 350 }]);
  });

  it('lists newest first, 20 a page, by default; --sort, --page and --cursor turn the pages; --limit bounds query and aggregate; create reads --file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-data-'));
    const status = `p-${run}`;
    const ids: string[] = [];
    try {
      for (const budget of [30, 10, 20]) {
        const file = join(dir, `${budget}.json`);
        await writeFile(file, JSON.stringify({ name: `Page ${run} ${budget}`, status, budget }));
        const created = await svc(['resources', 'create', 'project', '--tenant-id', acme, '--file', file, '--format', 'json'], env);
        expect(created.exitCode, created.stderr).toBe(0);
        expect(created.json.data).toEqual({ name: `Page ${run} ${budget}`, status, budget });
        ids.push(created.json.id);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const fromStdin = await svc(['resources', 'create', 'project', '--tenant-id', acme, '--file', '-', '--format', 'json'], env, JSON.stringify({ name: `Stdin ${run}`, budget: 5 }));
    expect(fromStdin.exitCode, fromStdin.stderr).toBe(0);
    expect(fromStdin.json.data).toEqual({ name: `Stdin ${run}`, budget: 5 });

    const where = JSON.stringify({ status });
    const list = (...args: string[]) => svc(['resources', 'list', 'project', '--tenant-id', acme, '--where', where, ...args, '--format', 'json'], env);
    const budgets = (answer: { json: any }) => answer.json.data.map((r: any) => r.data.budget);

    const byDefault = await list();
    expect(byDefault.exitCode, byDefault.stderr).toBe(0);
    expect(byDefault.json).toMatchObject({ page: 1, limit: 20, total: 3, hasMore: false });
    expect(byDefault.json.data.map((r: any) => r.id)).toEqual([...ids].reverse());

    const first = await list('--sort', 'budget', '--limit', '1');
    expect(first.json).toMatchObject({ page: 1, limit: 1, hasMore: true });
    expect(budgets(first)).toEqual([10]);
    const second = await list('--sort', 'budget', '--limit', '1', '--page', '2');
    expect(second.json).toMatchObject({ page: 2, limit: 1, hasMore: true });
    expect(budgets(second)).toEqual([20]);
    const next = await list('--sort', 'budget', '--limit', '1', '--cursor', first.json.nextCursor);
    expect(next.exitCode, next.stderr).toBe(0);
    expect(budgets(next)).toEqual([20]);
    expect(budgets(await list('--sort', '-budget', '--limit', '2'))).toEqual([30, 20]);

    const queried = await svc(['resources', 'query', '--tenant-id', acme, '--types', 'project', '--where', where, '--limit', '2', '--format', 'json'], env);
    expect(queried.exitCode, queried.stderr).toBe(0);
    expect(queried.json).toMatchObject({ hasMore: true });
    expect(queried.json.data).toHaveLength(2);
    const aggregated = await svc(
      ['resources', 'aggregate', 'project', '--tenant-id', acme, '--group-by', 'name', '--metrics', '{"n":{"count":"*"}}', '--where', where, '--limit', '1', '--format', 'json'],
      env,
    );
    expect(aggregated.exitCode, aggregated.stderr).toBe(0);
    expect(aggregated.json).toMatchObject({ hasMore: true });
    expect(aggregated.json.data).toHaveLength(1);
  });

  it('creates, reads, lists, updates and deletes a resource in JSON, printing what the platform returned', async () => {
    const created = await svc(['resources', 'create', 'project', '--tenant-id', acme, '--data', JSON.stringify({ name: `Apollo ${run}`, budget: 100 }), '--format', 'json'], env);
    expect(created.exitCode, created.stderr).toBe(0);
    expect(created.json).toMatchObject({ type: 'project', version: 1, data: { name: `Apollo ${run}`, budget: 100 } });
    const id: string = created.json.id;
    expect(created.stderr).toBe('');

    const got = await svc(['resources', 'get', 'project', id, '--tenant-id', acme, '--format', 'json'], env);
    expect(got.exitCode).toBe(0);
    expect(got.json).toEqual(created.json);
    const direct = await stack.request('GET', `/v4/data/resources/${acme}/project/${id}`, { as: ADMIN });
    expect(got.json).toEqual(direct.body);

    const listed = await svc(['resources', 'list', 'project', '--tenant-id', acme, '--where', JSON.stringify({ name: `Apollo ${run}` }), '--limit', '5', '--format', 'json'], env);
    expect(listed.exitCode).toBe(0);
    expect(listed.json).toMatchObject({ page: 1, limit: 5, hasMore: false });
    expect(listed.json.data.map((r: any) => r.id)).toContain(id);

    // No --version: the client reads the stored one first.
    const updated = await svc(['resources', 'update', 'project', id, '--tenant-id', acme, '--data', '{"name":"Apollo 2"}', '--format', 'json'], env);
    expect(updated.exitCode, updated.stdout + updated.stderr).toBe(0);
    expect(updated.json).toMatchObject({ id, version: 2, data: { name: 'Apollo 2' } });
    const atVersion = await svc(['resources', 'update', 'project', id, '--tenant-id', acme, '--data', '{"name":"Apollo 3"}', '--version', '2', '--format', 'json'], env);
    expect(atVersion.json).toMatchObject({ version: 3 });

    const deleted = await svc(['resources', 'delete', 'project', id, '--tenant-id', acme, '--force', '--format', 'json'], env);
    expect(deleted.exitCode).toBe(0);
    expect(deleted.json).toEqual({ id, type: 'project', deleted: true });
    expect((await stack.request('GET', `/v4/data/resources/${acme}/project/${id}`, { as: ADMIN })).status).toBe(404);
  });

  it('renders resources as text, without colour when stdout is not a terminal', async () => {
    const created = await svc(['resources', 'create', 'project', '--tenant-id', acme, '--data', JSON.stringify({ name: `Gemini ${run}`, status: 'open' })], env);
    expect(created.exitCode, created.stderr).toBe(0);
    expect(tagged(created.stdout)).toMatchInlineSnapshot(`
      "id         <uuid>
      type       project
      version    1
      createdAt  <time>
      updatedAt  <time>
      data
      {
        "name": "Gemini <run>",
        "status": "open"
      }
      "
    `);
    const id = /^id\s+(\S+)/m.exec(created.stdout)![1]!;

    const listed = await svc(['resources', 'list', 'project', '--tenant-id', acme, '--where', JSON.stringify({ name: `Gemini ${run}` })], env);
    expect(listed.exitCode).toBe(0);
    expect(tagged(listed.stdout)).toMatchInlineSnapshot(`
      "ID                                    VERSION  UPDATED                   DATA
      <uuid>  1        <time>  {"name":"Gemini <run>","status":"open"}
      1 of 1 (page 1, limit 20)
      "
    `);
    expect(listed.stdout).not.toContain('\u001b[');

    const simple = await svc(['resources', 'get', 'project', id, '--tenant-id', acme, '--simple'], env);
    expect(tagged(simple.stdout)).toMatchInlineSnapshot(`
      "id: <uuid>
      type: project
      version: 1
      createdAt: <time>
      updatedAt: <time>
      data: {
        "name": "Gemini <run>",
        "status": "open"
      }
      "
    `);

    const deleted = await svc(['resources', 'delete', 'project', id, '--tenant-id', acme, '--force'], env);
    expect(deleted.stdout).toBe(`Deleted project ${id}\n`);
  });

  it("searches the tenant's resources in the mode asked for, and lists the published schema", async () => {
    const type = await stack.request('POST', `/v4/data/resources/object-types?tenant_id=${acme}`, {
      as: ADMIN,
      body: { name: `Ticket${run.replace(/-/g, '')}`, schema: { type: 'object', properties: { title: { type: 'string' } } }, searchFields: ['title'] },
    });
    expect(type.status, JSON.stringify(type.body)).toBe(201);
    const word = `zq${run.replace(/[^a-z]/g, '')}printer`;
    const create = (title: string) => svc(['resources', 'create', type.body.key, '--tenant-id', acme, '--data', JSON.stringify({ title }), '--format', 'json'], env);
    const [jammed, toner] = await Promise.all([create(`${word} jams on every page`), create(`${word} is out of toner`)]);
    expect([jammed.exitCode, toner.exitCode], jammed.stderr + toner.stderr).toEqual([0, 0]);

    const search = (...args: string[]) => svc(['resources', 'search', ...args, '--tenant-id', acme, '--format', 'json'], env);
    // Independent runs, side by side.
    const [found, both, byDefault, vector, hybrid, overridden, badMode, schema, schemaText] = await Promise.all([
      search(`${word} jams`, '--types', type.body.key, '--fulltext', '--limit', '1'),
      search(word, '--types', type.body.key, '--mode', 'fulltext'),
      search(word),
      search(word, '--vector'),
      search(word, '--hybrid'),
      search(word, '--mode', 'vector', '--fulltext'),
      search(word, '--mode', 'fuzzy'),
      svc(['resources', 'schema', '--tenant-id', acme, '--format', 'json'], env),
      svc(['resources', 'schema', '--tenant-id', acme], env),
    ]);
    expect(found.exitCode, found.stderr).toBe(0);
    expect(found.json).toMatchObject({ mode: 'fulltext' });
    expect(found.json.data.map((hit: any) => hit.id)).toEqual([jammed.json.id]);
    expect(both.json.data).toHaveLength(2);
    for (const [searched, mode] of [[byDefault, 'hybrid'], [vector, 'vector'], [hybrid, 'hybrid'], [overridden, 'fulltext']] as const) {
      expect(searched.exitCode, searched.stderr).toBe(0);
      expect(searched.json.mode).toBe(mode);
    }
    expect(badMode.exitCode).toBe(2);

    expect(schema.exitCode, schema.stderr).toBe(0);
    expect(schema.json).toEqual((await stack.request('GET', `/v4/data/resources/schema/${acme}`, { as: ADMIN })).body);
    expect(schema.json.data.map((t: any) => t.key)).toContain(type.body.key);
    expect(schemaText.stdout).toMatch(/^KEY\s+NAME\s+VERSION\s+FIELDS\n/);
    expect(schemaText.stdout).toMatch(new RegExp(`^${type.body.key}\\s+${type.body.name}\\s+1\\s+title$`, 'm'));
  });

  it('reports an unknown id as E202 with its exit code, in text and JSON', async () => {
    const missing = randomUUID();
    const text = await svc(['resources', 'get', 'project', missing, '--tenant-id', acme], env);
    expect(text.exitCode).toBe(5);
    expect(text.stdout).toBe('');
    expect(text.stderr).toBe(`Error E202: project ${missing} not found\n→ verify the id or name\n`);

    const json = await svc(['resources', 'get', 'project', missing, '--tenant-id', acme, '--format', 'json'], env);
    expect(json.exitCode).toBe(5);
    expect(json.json).toEqual({ error: { code: 'E202', message: `project ${missing} not found`, suggestion: 'verify the id or name', exitCode: 5 } });
  });

  it('reports a stale version as E205', async () => {
    const created = await svc(['resources', 'create', 'project', '--tenant-id', acme, '--data', '{"name":"Mercury"}', '--format', 'json'], env);
    const id = created.json.id;
    const stale = await svc(['resources', 'update', 'project', id, '--tenant-id', acme, '--data', '{"name":"x"}', '--version', '7', '--format', 'json'], env);
    expect(stale.exitCode).toBe(7);
    expect(stale.json.error).toMatchObject({ code: 'E205', suggestion: 'the resource exists or conflicts with existing data', exitCode: 7 });
    expect(stale.json.error.message).toMatch(/^Resource conflict: .*current version 1/);
    expect((await stack.request('GET', `/v4/data/resources/${acme}/project/${id}`, { as: ADMIN })).body.version).toBe(1);
  });

  it('never prompts without a terminal: delete without --force fails naming --force and deletes nothing', async () => {
    const created = await svc(['resources', 'create', 'project', '--tenant-id', acme, '--data', '{"name":"Vostok"}', '--format', 'json'], env);
    const id = created.json.id;
    const refused = await svc(['resources', 'delete', 'project', id, '--tenant-id', acme], env);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('E305');
    expect(refused.stderr).toContain('pass --force');
    const noInput = await svc(['resources', 'delete', 'project', id, '--tenant-id', acme, '--no-input', '--format', 'json'], { ...env, CI: 'true' });
    expect(noInput.json.error).toMatchObject({ code: 'E305', exitCode: 2 });
    expect(noInput.json.error.message).toContain('--force');
    expect((await stack.request('GET', `/v4/data/resources/${acme}/project/${id}`, { as: ADMIN })).status).toBe(200);
  });

  it('validates input before calling: bad JSON, a missing required option, an unknown format', async () => {
    const badJson = await svc(['resources', 'create', 'project', '--tenant-id', acme, '--data', '{name'], env);
    expect(badJson.exitCode).toBe(2);
    expect(badJson.stderr).toMatch(/^Error E305: Invalid input: --data is not valid JSON/);
    const missing = await svc(['resources', 'query', '--tenant-id', acme, '--format', 'json'], env);
    expect(missing.json).toEqual({ error: { code: 'E303', message: 'Required field missing: --types', suggestion: 'provide a value for --types', exitCode: 2 } });
    const format = await svc(['resources', 'list', 'project', '--tenant-id', acme, '--format', 'yaml'], env);
    expect(format.exitCode).toBe(2);
    expect(format.stderr).toBe('Error E304: Invalid format: --format yaml\n→ valid formats are text, json\n');
    const invalid = await svc(['resources', 'create', 'project', '--tenant-id', acme, '--data', '{"budget":-1}', '--format', 'json'], env);
    expect(invalid.json.error).toMatchObject({ code: 'E302', exitCode: 2 });
  });

  it('accepts the deprecated --json with a note on stderr', async () => {
    const listed = await svc(['resources', 'list', 'project', '--tenant-id', acme, '--limit', '1', '--json'], env);
    expect(listed.exitCode).toBe(0);
    expect(listed.json).toMatchObject({ limit: 1 });
    expect(listed.stderr).toBe('Warning: --json is deprecated; use --format json\n');
  });

  it('says who is not logged in (E101) and when the platform is unreachable (E201)', async () => {
    const anonymous = await svc(['resources', 'list', 'project', '--tenant-id', acme, '--format', 'json'], { HOME: home, BASE_URL_PUBLIC_API: stack.url });
    expect(anonymous.json).toEqual({ error: { code: 'E101', message: 'Not logged in', suggestion: 'run login', exitCode: 4 } });
    const refused = await svc(['resources', 'list', 'project', '--tenant-id', acme, '--format', 'json'], { ...env, SVC_TOKEN: 'not-a-token' });
    expect(refused.json.error).toMatchObject({ code: 'E103', exitCode: 4 });
    const unreachable = await svc(['resources', 'list', 'project', '--tenant-id', acme], { ...env, BASE_URL_PUBLIC_API: 'http://127.0.0.1:9' });
    expect(unreachable.exitCode).toBe(8);
    expect(unreachable.stderr).toBe('Error E201: Platform API unreachable: http://127.0.0.1:9\n→ check the network and `BASE_URL_PUBLIC_API`\n');
  });

  it('colours only when allowed: --color forces it, NO_COLOR and --no-color turn it off', async () => {
    const args = ['resources', 'get', 'project', randomUUID(), '--tenant-id', acme];
    expect((await svc([...args, '--color'], env)).stderr).toContain('\u001b[');
    expect((await svc(args, { ...env, FORCE_COLOR: '1' })).stderr).toContain('\u001b[');
    expect((await svc(args, { ...env, FORCE_COLOR: '1', NO_COLOR: '1' })).stderr).not.toContain('\u001b[');
    expect((await svc(args, { ...env, FORCE_COLOR: '1', TERM: 'dumb' })).stderr).not.toContain('\u001b[');
    expect((await svc([...args, '--no-color'], { ...env, FORCE_COLOR: '1' })).stderr).not.toContain('\u001b[');
  });
});
