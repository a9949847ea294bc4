import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, GLOBEX_ADMIN, MEMBER, startTestStack, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const DATA = '/v4/data/resources';

/**
 * v4 resource search through HTTP: each type's `searchFields` projection is kept current by every
 * write (full text in the write's transaction, vectors shortly after), ranked in fulltext, vector
 * and hybrid mode, and confined to the tenant in the path.
 */
describe('v4 resource search', () => {
  let stack: TestStack;
  let acme: string;
  let globex: string;
  const run = `R${randomBytes(3).toString('hex')}`;
  const typeName = `Ticket${run}`;
  let typeKey: string;
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });

  const search = (body: unknown, tenantId = acme, as = MEMBER) => stack.request('POST', `${DATA}/${tenantId}/search`, { as, body });
  const create = async (data: Record<string, unknown>) => {
    const created = await stack.request('POST', `${DATA}/${acme}/${typeKey}`, { as: ADMIN, body: { data } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body as { id: string; version: number };
  };

  beforeAll(async () => {
    stack = await startTestStack();
    acme = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: any) => t.slug === 'acme').id;
    globex = (await stack.request('GET', '/v4/identity/tenants', { as: GLOBEX_ADMIN })).body.data.find((t: any) => t.slug === 'globex').id;
    const type = await stack.request('POST', `${DATA}/object-types`, {
      as: ADMIN,
      body: {
        name: typeName,
        schema: {
          type: 'object',
          properties: { title: { type: 'string' }, body: { type: 'string' }, customer: { type: 'object', properties: { name: { type: 'string' } } }, internal: { type: 'string' } },
        },
        searchFields: ['title', 'body', 'customer.name'],
      },
    });
    expect(type.status, JSON.stringify(type.body)).toBe(201);
    typeKey = type.body.key;
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
  });

  it('finds a resource by its search fields as soon as the write answers, with the projected fields and a 0..1 score', async () => {
    const printer = await create({ title: 'Printer jams on every page', body: 'The office laser printer jams constantly', customer: { name: 'Initech' }, internal: 'zebracode' });
    await create({ title: 'Password reset', body: 'User cannot log in after the password change', customer: { name: 'Globochem' } });
    const found = await search({ query: 'laser printer jams', mode: 'fulltext' });
    expect(found.status, JSON.stringify(found.body)).toBe(200);
    expect(found.body.mode).toBe('fulltext');
    expect(found.body.data[0]).toMatchObject({
      id: printer.id,
      objectType: typeKey,
      fields: { title: 'Printer jams on every page', body: 'The office laser printer jams constantly', 'customer.name': 'Initech' },
    });
    expect(found.body.data[0].score).toBeGreaterThan(0);
    expect(found.body.data[0].score).toBeLessThanOrEqual(1);
    // A nested search field counts; a field outside searchFields is not searched.
    expect((await search({ query: 'initech', mode: 'fulltext' })).body.data.map((h: any) => h.id)).toEqual([printer.id]);
    expect((await search({ query: 'zebracode', mode: 'fulltext' })).body.data).toEqual([]);
  });

  it('keeps the projection current on update, batch writes and delete', async () => {
    const ticket = await create({ title: 'Coffee machine leaking', body: 'Water on the kitchen floor' });
    const updated = await stack.request('PUT', `${DATA}/${acme}/${typeKey}/${ticket.id}`, { as: ADMIN, body: { data: { title: 'Coffee machine fixed', body: 'Gasket replaced' }, version: ticket.version } });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect((await search({ query: 'leaking kitchen floor', mode: 'fulltext' })).body.data.map((h: any) => h.id)).not.toContain(ticket.id);
    expect((await search({ query: 'gasket', mode: 'fulltext' })).body.data.map((h: any) => h.id)).toEqual([ticket.id]);

    const batch = await stack.request('POST', `${DATA}/${acme}/${typeKey}/batch/create`, { as: ADMIN, body: { items: [{ title: 'Projector bulb burnt out' }, { title: 'Stapler missing' }] } });
    expect(batch.status, JSON.stringify(batch.body)).toBe(201);
    expect((await search({ query: 'projector bulb', mode: 'fulltext' })).body.data).toHaveLength(1);

    const removed = await stack.request('DELETE', `${DATA}/${acme}/${typeKey}/${ticket.id}`, { as: ADMIN });
    expect(removed.status).toBe(204);
    expect((await search({ query: 'gasket', mode: 'fulltext' })).body.data).toEqual([]);
  });

  it('ranks by meaning in vector and hybrid mode once the projection is embedded', { timeout: 90_000 }, async () => {
    const written = performance.now();
    const heating = await create({ title: 'Radiators stay cold', body: 'No heat in the meeting rooms since Monday' });
    await until(
      () => sql<{ n: number }[]>`select count(*)::int as n from search_chunks where source_id = ${heating.id} and embedding_model is not null`,
      (rows) => rows[0]!.n === 1,
      60_000,
    );
    console.log(`projection embedded ${(performance.now() - written).toFixed(0)} ms after the write answered`);
    const vector = await search({ query: 'the heating is broken', mode: 'vector', limit: 3 });
    expect(vector.status, JSON.stringify(vector.body)).toBe(200);
    expect(vector.body.mode).toBe('vector');
    expect(vector.body.data.map((h: any) => h.id)).toContain(heating.id);
    const hybrid = await search({ query: 'radiators cold heating' });
    expect(hybrid.body.mode).toBe('hybrid');
    expect(hybrid.body.data[0].id).toBe(heating.id);
    for (const hit of hybrid.body.data) {
      expect(hit.score).toBeGreaterThanOrEqual(0);
      expect(hit.score).toBeLessThanOrEqual(1);
    }
  });

  it('rebuilds the projection of stored resources when a type changes its searchFields', async () => {
    const note = await stack.request('POST', `${DATA}/object-types`, {
      as: ADMIN,
      body: { name: `Note${run}`, schema: { type: 'object', properties: { title: { type: 'string' }, body: { type: 'string' } } }, searchFields: ['title'] },
    });
    expect(note.status, JSON.stringify(note.body)).toBe(201);
    const written = await stack.request('POST', `${DATA}/${acme}/${note.body.key}`, { as: ADMIN, body: { data: { title: 'Quarterly offsite', body: 'Bring hiking boots' } } });
    expect(written.status).toBe(201);
    const find = async (query: string) => (await search({ query, mode: 'fulltext', types: [note.body.key] })).body.data.map((h: any) => h.id);
    expect(await find('hiking boots')).toEqual([]);

    const widened = await stack.request('PATCH', `${DATA}/object-types/${note.body.objectTypeId}`, { as: ADMIN, body: { searchFields: ['title', 'body'] } });
    expect(widened.status, JSON.stringify(widened.body)).toBe(200);
    expect(await find('hiking boots')).toEqual([written.body.id]);

    const cleared = await stack.request('PATCH', `${DATA}/object-types/${note.body.objectTypeId}`, { as: ADMIN, body: { searchFields: [] } });
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
    expect(await find('quarterly offsite')).toEqual([]);
    expect(await sql`select 1 from search_chunks where source_id = ${written.body.id}`).toEqual([]);
  });

  it('filters by object type, by key or PascalCase name, and honours limit', async () => {
    expect((await search({ query: 'printer', mode: 'fulltext', types: [typeName] })).body.data.length).toBeGreaterThan(0);
    expect((await search({ query: 'printer', mode: 'fulltext', types: ['project'] })).body.data).toEqual([]);
    expect((await search({ query: 'printer jams password reset', mode: 'fulltext', limit: 1 })).body.data).toHaveLength(1);
  });

  it('refuses another tenant: acme\'s resources are neither searchable through globex nor by a globex caller', async () => {
    const refused = await search({ query: 'printer', mode: 'fulltext' }, acme, GLOBEX_ADMIN);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
    const own = await search({ query: 'laser printer jams initech', mode: 'fulltext' }, globex, GLOBEX_ADMIN);
    expect(own.status).toBe(200);
    expect(own.body.data).toEqual([]);
    expect((await stack.request('POST', `${DATA}/${acme}/search`, { body: { query: 'printer' } })).status).toBe(401);
  });

  it('refuses bad input with 400 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'query'],
      [{ query: '   ' }, 'query'],
      [{ query: 'x', mode: 'semantic' }, 'mode'],
      [{ query: 'x', limit: 0 }, 'limit'],
      [{ query: 'x', limit: 101 }, 'limit'],
      [{ query: 'x', types: [] }, 'types'],
      [{ query: 'x', types: ['NoSuchType'] }, 'types.0'],
      [{ query: 'x', colour: 'blue' }, 'colour'],
    ];
    for (const [body, field] of cases) {
      const response = await search(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field } });
    }
    expect((await stack.request('POST', `${DATA}/${acme}/search`, { as: MEMBER, rawBody: '[1,2]' })).status).toBe(400);
  });
});
