import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, GLOBEX_ADMIN, MEMBER, startTestStack, type TestStack } from '../harness/stack.ts';

const DATA = '/v4/data/resources';
const BUILT_IN = ['project', 'tenant-vertical-enrollment', 'shared-workflow-config', 'vertical-product-config', 'shared-ai-profile', 'shared-chatbot-config'];

/** v4 data: a tenant's object types, and its resources with versions, ETags and where filters. */
describe('v4 data API', () => {
  let stack: TestStack;
  let acme: string;
  let globex: string;
  /** A PascalCase suffix of this run, so that its type names never meet another run's. */
  const run = `R${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    // Budgets above the concurrency tests' requests: each must reach the resource, not a 429.
    const plenty = { points: 100_000, durationSeconds: 60 };
    stack = await startTestStack({ rateLimits: { policies: { resources: plenty, users: plenty } } });
    acme = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: any) => t.slug === 'acme').id;
    globex = (await stack.request('GET', '/v4/identity/tenants', { as: GLOBEX_ADMIN })).body.data.find((t: any) => t.slug === 'globex').id;
  });
  afterAll(() => stack?.close());

  /** Creates a published type of acme's with a number `amount`, a text `status` and an integer `n`. */
  async function createType(name: string, extra: Record<string, unknown> = {}) {
    const created = await stack.request('POST', `${DATA}/object-types`, {
      as: ADMIN,
      body: {
        name: `${name}${run}`,
        schema: { type: 'object', properties: { amount: { type: 'number' }, status: { type: 'string', maxLength: 50 }, n: { type: 'integer' } } },
        ...extra,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body;
  }

  it('lists the built-in types with their keys, PascalCase names and schemas, and the published ones per tenant', async () => {
    const list = await stack.request('GET', `${DATA}/object-types`, { as: MEMBER });
    expect(list.status).toBe(200);
    const builtIn = list.body.data.filter((t: any) => t.builtIn);
    expect(builtIn.map((t: any) => t.key).sort()).toEqual([...BUILT_IN].sort());
    expect(builtIn.find((t: any) => t.key === 'shared-workflow-config')).toMatchObject({
      name: 'SharedWorkflowConfig',
      status: 'published',
      version: 2,
      schema: { type: 'object', required: ['workflowKey', 'status'] },
      indexes: ['workflowKey'],
      searchFields: [],
      actions: {},
      fileProperties: {},
    });
    expect(builtIn.every((t: any) => /^[0-9a-f-]{36}$/.test(t.objectTypeId) && /^[A-Z][A-Za-z]+$/.test(t.name))).toBe(true);
    const schema = await stack.request('GET', `${DATA}/schema/${acme}`, { as: MEMBER });
    expect(schema.status).toBe(200);
    expect(schema.body.data.map((t: any) => t.key)).toEqual(expect.arrayContaining(BUILT_IN));
  });

  it('creates a type with its metadata, takes no writes while it is a draft, and publishes it', async () => {
    const draft = await createType('Invoice', {
      status: 'draft',
      indexes: ['amount'],
      searchFields: ['status'],
      actions: { pay: { from: { status: ['open'] }, set: { status: 'paid' } } },
      fileProperties: { scan: { maxSize: 1000, contentTypes: ['application/pdf'] } },
    });
    expect(draft).toMatchObject({
      key: `invoice-${run.toLowerCase()}`,
      name: `Invoice${run}`,
      status: 'draft',
      version: 1,
      builtIn: false,
      writtenThrough: null,
      indexes: ['amount'],
      searchFields: ['status'],
      actions: { pay: { from: { status: ['open'] }, set: { status: 'paid' } } },
      fileProperties: { scan: { maxSize: 1000, contentTypes: ['application/pdf'] } },
    });
    const refused = await stack.request('POST', `${DATA}/${acme}/${draft.key}`, { as: ADMIN, body: { data: { amount: 1 } } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('CONFLICT');
    expect((await stack.request('GET', `${DATA}/schema/${acme}`, { as: ADMIN })).body.data.map((t: any) => t.key)).not.toContain(draft.key);

    const published = await stack.request('PATCH', `${DATA}/object-types/${draft.objectTypeId}`, { as: ADMIN, body: { status: 'published' } });
    expect(published.status).toBe(200);
    expect(published.body).toMatchObject({ status: 'published', version: 2, indexes: ['amount'] });
    expect((await stack.request('POST', `${DATA}/${acme}/${draft.name}`, { as: ADMIN, body: { data: { amount: 1 } } })).status).toBe(201);
    expect((await stack.request('GET', `${DATA}/object-types?tenant_id=${globex}`, { as: GLOBEX_ADMIN })).body.data.map((t: any) => t.key)).not.toContain(draft.key);
  });

  it.each<[string, Record<string, unknown>, number, string]>([
    ['a name that is not PascalCase', { name: 'invoice_x', schema: { type: 'object' } }, 400, 'name'],
    ['a key that names a route', { name: 'StorageX', key: 'storage', schema: { type: 'object' } }, 400, 'key'],
    ['a schema that is not an object schema', { name: 'ListX', schema: { type: 'array' } }, 400, 'schema'],
    ['a schema that does not compile', { name: 'BrokenX', schema: { type: 'object', properties: { a: { type: 'nope' } } } }, 400, 'schema'],
    ['an unknown field', { name: 'ExtraX', schema: { type: 'object' }, color: 'red' }, 400, 'color'],
    ['an action that does nothing', { name: 'IdleX', schema: { type: 'object' }, actions: { idle: {} } }, 400, 'actions.idle'],
    ['an $async schema', { name: 'AsyncX', schema: { type: 'object', $async: true, required: ['a'] } }, 400, 'schema'],
    ['a schema with a pattern', { name: 'PatternX', schema: { type: 'object', properties: { p: { type: 'string', pattern: '^(a+)+$' } } } }, 400, 'schema'],
    ['a schema with an $id', { name: 'IdX', schema: { type: 'object', $id: 'https://example.test/s' } }, 400, 'schema'],
    ['a schema referring outside itself', { name: 'RefX', schema: { type: 'object', properties: { a: { $ref: 'https://example.test/s' } } } }, 400, 'schema'],
    ['a built-in key', { name: 'ProjectCopy', key: 'project', schema: { type: 'object' } }, 409, 'key'],
    ['a built-in name', { name: 'Project', key: 'project-copy', schema: { type: 'object' } }, 409, 'name'],
  ])('refuses %s', async (_label, body, status, field) => {
    const response = await stack.request('POST', `${DATA}/object-types`, { as: ADMIN, body });
    expect(response.status, JSON.stringify(response.body)).toBe(status);
    expect(response.body.error.details.field).toBe(field);
  });

  it('creates a type once when the same one is created ten times at once; the others are 409', async () => {
    const body = { name: `Twin${run}`, schema: { type: 'object' } };
    const token = await stack.token(ADMIN);
    const answers = await Promise.all(Array.from({ length: 10 }, () => stack.request('POST', `${DATA}/object-types`, { token, body })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409).map((a) => a.body.error.code)).toEqual(Array(9).fill('CONFLICT'));
  });

  it('lets only tenant administrators change types, and nobody change a built-in one', async () => {
    const list = (await stack.request('GET', `${DATA}/object-types`, { as: ADMIN })).body.data;
    const project = list.find((t: any) => t.key === 'project');
    expect((await stack.request('POST', `${DATA}/object-types`, { as: MEMBER, body: { name: `Memo${run}`, schema: { type: 'object' } } })).status).toBe(403);
    const builtIn = await stack.request('PATCH', `${DATA}/object-types/${project.objectTypeId}`, { as: ADMIN, body: { status: 'draft' } });
    expect(builtIn.status).toBe(403);
    expect((await stack.request('GET', `${DATA}/object-types`, { as: ADMIN })).body.data.find((t: any) => t.key === 'project')).toEqual(project);
  });

  it('refuses a schema change that stored resources would not satisfy, naming them, and changes nothing', async () => {
    const type = await createType('Order');
    const ids: string[] = [];
    for (const amount of [1, 2, 3]) ids.push((await stack.request('POST', `${DATA}/${acme}/${type.key}`, { as: ADMIN, body: { data: { amount } } })).body.id);
    const stricter = { ...type.schema, required: ['customer'] };
    const refused = await stack.request('PATCH', `${DATA}/object-types/${type.objectTypeId}`, { as: ADMIN, body: { schema: stricter } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('SCHEMA_INCOMPATIBLE');
    expect(refused.body.error.details.total).toBe(3);
    expect([...refused.body.error.details.resourceIds].sort()).toEqual([...ids].sort());
    const after = (await stack.request('GET', `${DATA}/object-types`, { as: ADMIN })).body.data.find((t: any) => t.key === type.key);
    expect(after).toEqual(type);
    const wider = { ...type.schema, properties: { ...type.schema.properties, customer: { type: 'string' } } };
    const accepted = await stack.request('PATCH', `${DATA}/object-types/${type.objectTypeId}`, { as: ADMIN, body: { schema: wider } });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ version: 2, schema: wider });
  });

  it('creates, reads, replaces at a version and deletes a resource, with ETag, If-None-Match and If-Match', async () => {
    const type = await createType('Bill');
    const path = `${DATA}/${acme}/${type.key}`;
    const me = (await stack.request('GET', '/v4/identity/me', { as: ADMIN })).body;
    const created = await stack.request('POST', path, { as: ADMIN, body: { data: { amount: 10, status: 'open' } } });
    expect(created.status).toBe(201);
    expect(created.headers.get('etag')).toBe('"1"');
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: type.key,
      data: { amount: 10, status: 'open' },
      version: 1,
      createdAt: expect.any(String),
      updatedAt: created.body.createdAt,
      createdBy: me.id,
      updatedBy: me.id,
    });
    const item = `${path}/${created.body.id}`;
    const byName = await stack.request('GET', `${DATA}/${acme}/${type.name}/${created.body.id}`, { as: MEMBER });
    expect(byName.status).toBe(200);
    expect(byName.body).toEqual(created.body);
    expect(byName.headers.get('etag')).toBe('"1"');
    const unchanged = await stack.request('GET', item, { as: MEMBER, headers: { 'if-none-match': '"1"' } });
    expect(unchanged.status).toBe(304);
    expect(unchanged.body).toBeUndefined();

    const unversioned = await stack.request('PUT', item, { as: ADMIN, body: { data: { amount: 11 } } });
    expect(unversioned.status).toBe(428);
    expect(unversioned.body.error.code).toBe('PRECONDITION_REQUIRED');
    const replaced = await stack.request('PUT', item, { as: ADMIN, body: { data: { amount: 11 }, version: 1 } });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ version: 2, data: { amount: 11 } });
    expect(replaced.headers.get('etag')).toBe('"2"');
    const stale = await stack.request('PUT', item, { as: ADMIN, body: { data: { amount: 99 }, version: 1 } });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'VERSION_CONFLICT', details: { currentVersion: 2 } });
    const byHeader = await stack.request('PUT', item, { as: ADMIN, body: { data: { amount: 12 } }, headers: { 'if-match': '"2"' } });
    expect(byHeader.body).toMatchObject({ version: 3, data: { amount: 12 } });
    const disagreeing = await stack.request('PUT', item, { as: ADMIN, body: { data: { amount: 13 }, version: 3 }, headers: { 'if-match': '"2"' } });
    expect(disagreeing.status).toBe(400);
    expect(disagreeing.body.error.details.field).toBe('version');

    // The type's PascalCase name writes too, and checks the version the same way.
    const itemByName = `${DATA}/${acme}/${type.name}/${created.body.id}`;
    const staleByName = await stack.request('PUT', itemByName, { as: ADMIN, body: { data: { amount: 13 }, version: 2 } });
    expect(staleByName.body.error).toMatchObject({ code: 'VERSION_CONFLICT', details: { currentVersion: 3 } });
    const replacedByName = await stack.request('PUT', itemByName, { as: ADMIN, body: { data: { amount: 13 }, version: 3 } });
    expect(replacedByName.status, JSON.stringify(replacedByName.body)).toBe(200);
    expect(replacedByName.body).toMatchObject({ type: type.key, version: 4, data: { amount: 13 } });
    const missing = await stack.request('PUT', `${path}/${randomUUID()}`, { as: ADMIN, body: { data: { amount: 1 }, version: 1 } });
    expect(missing.status).toBe(404);

    const staleDelete = await stack.request('DELETE', item, { as: ADMIN, headers: { 'if-match': '"1"' } });
    expect(staleDelete.status).toBe(409);
    expect((await stack.request('GET', item, { as: ADMIN })).body.version).toBe(4);
    expect((await stack.request('DELETE', item, { as: ADMIN, headers: { 'if-match': '"4"' } })).status).toBe(204);
    expect((await stack.request('GET', item, { as: ADMIN })).status).toBe(404);
  });

  let checkType: Promise<any> | undefined;
  it.each<[string, unknown, Record<string, string>, number, string]>([
    ['a body field beside data', { data: { amount: 1 }, extra: true }, {}, 400, 'extra'],
    ['data of the wrong kind', { data: { amount: 'ten' } }, {}, 400, 'amount'],
    ['a type in the body', { data: {}, type: 'project' }, {}, 400, 'type'],
    ['an If-Match naming no version', { data: {} }, { 'if-match': 'yesterday' }, 400, 'If-Match'],
  ])('refuses %s on create or replace', async (_label, body, headers, status, field) => {
    checkType ??= createType('Check');
    const type = await checkType;
    const created = (await stack.request('POST', `${DATA}/${acme}/${type.key}`, { as: ADMIN, body: { data: { amount: 1 } } })).body;
    const response = headers['if-match']
      ? await stack.request('PUT', `${DATA}/${acme}/${type.key}/${created.id}`, { as: ADMIN, body, headers })
      : await stack.request('POST', `${DATA}/${acme}/${type.key}`, { as: ADMIN, body });
    expect(response.status, JSON.stringify(response.body)).toBe(status);
    expect(response.body.error.details.field).toBe(field);
  });

  it('lists by page number or cursor, newest first, sorted and filtered with where', async () => {
    const type = await createType('Ledger');
    const path = `${DATA}/${acme}/${type.key}`;
    for (const amount of [1, 2, 3, 4, 5]) expect((await stack.request('POST', path, { as: ADMIN, body: { data: { amount } } })).status).toBe(201);
    const amounts = (body: any) => body.data.map((r: any) => r.data.amount);

    const first = await stack.request('GET', `${path}?limit=2`, { as: MEMBER });
    expect(first.status).toBe(200);
    expect(amounts(first.body)).toEqual([5, 4]);
    expect(first.body).toMatchObject({ total: 5, page: 1, limit: 2, hasMore: true, nextCursor: expect.any(String) });
    const third = await stack.request('GET', `${path}?limit=2&page=3`, { as: MEMBER });
    expect(amounts(third.body)).toEqual([1]);
    expect(third.body).toMatchObject({ page: 3, hasMore: false, nextCursor: null });
    const walked: number[] = [];
    for (let cursor: string | null = ''; cursor !== null; ) {
      const page: any = await stack.request('GET', `${path}?limit=2&sort=amount${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { as: MEMBER });
      walked.push(...amounts(page.body));
      cursor = page.body.nextCursor;
    }
    expect(walked).toEqual([1, 2, 3, 4, 5]);
    expect((await stack.request('GET', `${path}?limit=20`, { as: MEMBER })).body.limit).toBe(20);
    expect((await stack.request('GET', path, { as: MEMBER })).body.limit).toBe(20);

    const where = (w: unknown) => `${path}?where=${encodeURIComponent(JSON.stringify(w))}`;
    const grouped = await stack.request('GET', where({ or: [{ amount: { lte: 1 } }, { amount: { gte: 5 } }] }), { as: MEMBER });
    expect(amounts(grouped.body)).toEqual([5, 1]);
    expect(grouped.body.total).toBe(2);
    expect(amounts((await stack.request('GET', where({ not: { amount: { in: [2, 3, 4] } } }), { as: MEMBER })).body)).toEqual([5, 1]);
    expect(amounts((await stack.request('GET', where({ amount: { nin: [1, 2] }, status: { exists: false } }), { as: MEMBER })).body)).toEqual([5, 4, 3]);
    expect(amounts((await stack.request('GET', `${path}?sort=-created_at&limit=1`, { as: MEMBER })).body)).toEqual([5]);

    for (const [query, field] of [
      [`where=${encodeURIComponent('{"amount":{"between":[1,2]}}')}`, 'where.amount'],
      [`where=${encodeURIComponent('{"or":[{"amount":{"gte":"x"}}]}')}`, 'where.or.0.amount.gte'],
      ['where=%7Bnot-json', 'where'],
      ['page=0', 'page'],
      ['page=1&cursor=abc', 'cursor'],
      ['limit=101', 'limit'],
    ]) {
      const refused = await stack.request('GET', `${path}?${query}`, { as: MEMBER });
      expect(refused.status, query).toBe(400);
      expect(refused.body.error.details.field, query).toBe(field);
    }
  });

  it("never shows one tenant's types or resources to another", async () => {
    const type = await createType('Secret');
    const created = (await stack.request('POST', `${DATA}/${acme}/${type.key}`, { as: ADMIN, body: { data: { amount: 7 } } })).body;
    expect((await stack.request('GET', `${DATA}/${globex}/${type.key}/${created.id}`, { as: GLOBEX_ADMIN })).status).toBe(404);
    expect((await stack.request('GET', `${DATA}/${globex}/${type.key}`, { as: GLOBEX_ADMIN })).status).toBe(404);
    expect((await stack.request('GET', `${DATA}/${acme}/${type.key}/${created.id}`, { as: GLOBEX_ADMIN })).status).toBe(403);
    const patched = await stack.request('PATCH', `${DATA}/object-types/${type.objectTypeId}?tenant_id=${globex}`, { as: GLOBEX_ADMIN, body: { status: 'draft' } });
    expect(patched.status).toBe(404);
    expect((await stack.request('GET', `${DATA}/${acme}/${type.key}/${created.id}`, { as: ADMIN })).body).toEqual(created);
  });

  it('lets exactly one of 50 concurrent writes of the same version win', { timeout: 120_000 }, async () => {
    const type = await createType('Race');
    const created = (await stack.request('POST', `${DATA}/${acme}/${type.key}`, { as: ADMIN, body: { data: { n: 0 } } })).body;
    const item = `${DATA}/${acme}/${type.key}/${created.id}`;
    const token = await stack.token(ADMIN);
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => stack.request('PUT', item, { token, body: { data: { n: i + 1 }, version: 1 } })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(49);
    const winner = answers.find((a) => a.status === 200)!.body;
    expect((await stack.request('GET', item, { token })).body).toMatchObject({ version: 2, data: winner.data });
  });

  it('ends at exactly 500 when 20 clients each add 1 twenty-five times, retrying on 409', { timeout: 300_000 }, async () => {
    const type = await createType('Counter');
    const created = (await stack.request('POST', `${DATA}/${acme}/${type.key}`, { as: ADMIN, body: { data: { n: 0 } } })).body;
    const item = `${DATA}/${acme}/${type.key}/${created.id}`;
    const token = await stack.token(ADMIN);
    let conflicts = 0;
    const client = async () => {
      for (let done = 0; done < 25; ) {
        const current = await stack.request('GET', item, { token });
        const written = await stack.request('PUT', item, { token, body: { data: { n: current.body.data.n + 1 }, version: current.body.version } });
        if (written.status === 200) done++;
        else if (written.status === 409) conflicts++;
        else throw new Error(`unexpected ${written.status}: ${JSON.stringify(written.body)}`);
      }
    };
    await Promise.all(Array.from({ length: 20 }, client));
    const final = (await stack.request('GET', item, { token })).body;
    expect(final.data.n).toBe(500);
    expect(final.version).toBe(501);
    expect(conflicts).toBeGreaterThan(0);
  });
});
