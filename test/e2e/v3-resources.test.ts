import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, MEMBER, startTestStack, V3, type ApiResponse, type TestStack } from '../harness/stack.ts';

/**
 * The v3 resources contract over HTTP, against the real platform and PostgreSQL. Other test files
 * write to the same database at the same time, so every row carries `metadata.suite` (this file)
 * and `metadata.batch` (one fixture set) and every list filters on both.
 */

type Row = Record<string, any>;

const SUITE = randomUUID();
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(() => stack?.close());

const path = (id: string, type = 'project') => `${V3}/resources/${type}/${encodeURIComponent(id)}`;

/** A fixture set: creates rows tagged with its own batch id and lists only those rows. */
function batch() {
  const id = randomUUID();
  const tag = (body: Row): Row => ({ ...body, metadata: { ...body.metadata, suite: SUITE, batch: id } });
  return {
    id,
    tag,
    async create(body: Row, as = ADMIN): Promise<Row> {
      const res = await stack.request('POST', `${V3}/resources/project`, { as, body: tag(body) });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body;
    },
    /** Creates rows one after another, so that their `createdAt` follow the given order. */
    async createInOrder(bodies: Row[]): Promise<Row[]> {
      const rows: Row[] = [];
      for (const body of bodies) {
        rows.push(await this.create(body));
        await sleep(2);
      }
      return rows;
    },
    list(query: Record<string, string> = {}, as = ADMIN): Promise<ApiResponse> {
      const params = new URLSearchParams({ type: 'project', 'filter[metadata.suite]': SUITE, 'filter[metadata.batch]': id, ...query });
      return stack.request('GET', `${V3}/resources?${params}`, { as });
    },
    /** Names of the rows a list returns, in order; fails unless the list succeeded. */
    async names(query: Record<string, string> = {}): Promise<string[]> {
      const res = await this.list(query);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.map((r: Row) => r.name);
    },
  };
}

function expectValidationError(res: ApiResponse, field: string, issue?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.any(String) });
  expect(res.body.error.details.field).toBe(field);
  if (issue !== undefined) expect(res.body.error.details.issue).toBe(issue);
}

function expectNotFound(res: ApiResponse): void {
  expect(res.status, JSON.stringify(res.body)).toBe(404);
  expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String) } });
}

const INVALID_BUDGETS: unknown[] = [0, -1, -0.5, '100', 'lots', true, null, [5], { amount: 5 }];

describe('POST /resources/:type', () => {
  it('creates a resource: 201 with the fields sent and server-set id, type, createdAt and updatedAt', async () => {
    const b = batch();
    const before = Date.now();
    const res = await stack.request('POST', `${V3}/resources/project`, {
      as: ADMIN,
      body: b.tag({ name: 'Apollo', status: 'active', budget: 5000, startDate: '2024-03-01', owner: 'user-1', metadata: { department: 'R&D', priority: 2 } }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      type: 'project',
      name: 'Apollo',
      status: 'active',
      budget: 5000,
      startDate: '2024-03-01',
      owner: 'user-1',
      metadata: { department: 'R&D', priority: 2, suite: SUITE, batch: b.id },
    });
    expect(res.body.id).toMatch(UUID);
    expect(res.body.createdAt).toMatch(ISO_TIMESTAMP);
    expect(res.body.updatedAt).toMatch(ISO_TIMESTAMP);
    expect(Date.parse(res.body.createdAt)).toBeGreaterThanOrEqual(before - 2000);
    expect(Date.parse(res.body.createdAt)).toBeLessThanOrEqual(Date.now() + 2000);
  });

  it('ignores server-owned fields sent in the body', async () => {
    const b = batch();
    const forgedId = randomUUID();
    const res = await stack.request('POST', `${V3}/resources/project`, {
      as: ADMIN,
      body: b.tag({ name: 'Forged', id: forgedId, type: 'invoice', createdAt: '2000-01-01T00:00:00.000Z', updatedAt: '2000-01-01T00:00:00.000Z', version: 99 }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.id).not.toBe(forgedId);
    expect(res.body.type).toBe('project');
    expect(res.body.createdAt).not.toBe('2000-01-01T00:00:00.000Z');
    expect(res.body.updatedAt).not.toBe('2000-01-01T00:00:00.000Z');
    expect(res.body).not.toHaveProperty('version');
    expectNotFound(await stack.request('GET', path(forgedId), { as: ADMIN }));
  });

  it('rejects a missing name with field "name" and creates nothing', async () => {
    const b = batch();
    expectValidationError(await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: b.tag({ budget: 10 }) }), 'name');
    expectValidationError(await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: b.tag({ name: '' }) }), 'name');
    expect((await b.list()).body.total).toBe(0);
  });

  it.each(INVALID_BUDGETS.map((budget) => [JSON.stringify(budget), budget]))(
    'rejects budget %s as not a positive number and creates nothing',
    async (_label, budget) => {
      const b = batch();
      const res = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: b.tag({ name: 'Bad budget', budget }) });
      expectValidationError(res, 'budget', 'must be a positive number');
      expect((await b.list()).body.total).toBe(0);
    },
  );

  it('rejects a budget that overflows to a non-finite number', async () => {
    const b = batch();
    const rawBody = JSON.stringify(b.tag({ name: 'Overflow', budget: 1 })).replace('"budget":1', '"budget":1e999');
    const res = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, rawBody });
    expectValidationError(res, 'budget', 'must be a positive number');
    expect((await b.list()).body.total).toBe(0);
  });

  it('accepts a small positive budget', async () => {
    const b = batch();
    expect((await b.create({ name: 'Tiny', budget: 0.01 })).budget).toBe(0.01);
  });

  it.each([
    ['startDate', '2024-02-30'],
    ['startDate', '01/03/2024'],
    ['completedAt', 'yesterday'],
    ['metadata', 'not an object'],
  ])('rejects %s=%j on that field', async (field, value) => {
    const b = batch();
    const res = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: { ...b.tag({ name: 'Typed fields' }), [field]: value } });
    expectValidationError(res, field);
    expect((await b.list()).body.total).toBe(0);
  });

  it('rejects a field the type does not declare', async () => {
    const b = batch();
    const res = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: b.tag({ name: 'Extra', colour: 'red' }) });
    expectValidationError(res, 'colour', 'is not a field of this type');
  });

  it('rejects a body that is not valid JSON, or not an object', async () => {
    const malformed = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, rawBody: '{"name": ' });
    expectValidationError(malformed, '(body)');
    const array = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: [{ name: 'x' }] });
    expect(array.status).toBe(400);
    expect(array.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('gives 404 for an unknown type', async () => {
    expectNotFound(await stack.request('POST', `${V3}/resources/no-such-type`, { as: ADMIN, body: { name: 'x' } }));
    // Whatever its form: no type can have such a name.
    expectNotFound(await stack.request('POST', `${V3}/resources/1abc`, { as: ADMIN, body: { name: 'x' } }));
    expectNotFound(await stack.request('POST', `${V3}/resources/my.type`, { as: ADMIN, body: { name: 'x' } }));
    expectNotFound(await stack.request('GET', `${V3}/resources?type=${encodeURIComponent('x y')}`, { as: ADMIN }));
  });

  it('answers a retry with the same Idempotency-Key with the first resource, and refuses the key for another body', async () => {
    const b = batch();
    const key = randomUUID();
    const first = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: b.tag({ name: 'Once' }), headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(201);
    const retry = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: b.tag({ name: 'Once' }), headers: { 'Idempotency-Key': key } });
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    const other = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: b.tag({ name: 'Another' }), headers: { 'Idempotency-Key': key } });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'Idempotency-Key' } });
    expect((await b.list()).body.total).toBe(1);
  });

  it('needs authentication', async () => {
    const res = await stack.request('POST', `${V3}/resources/project`, { body: { name: 'Anonymous' } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });
});

describe('rate-limit headers', () => {
  it('come with every resources response, successes and errors alike, at 1000 per minute', async () => {
    const created = await batch().create({ name: 'Counted' });
    const responses = [
      await stack.request('GET', path(created.id), { as: ADMIN }),
      await stack.request('GET', `${V3}/resources?type=project&limit=1`, { as: ADMIN }),
      await stack.request('GET', path(randomUUID()), { as: ADMIN }),
      await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: { budget: 0 } }),
    ];
    for (const res of responses) {
      expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
      expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
      expect(res.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
    }
  });
});

describe('GET /resources/:type/:id', () => {
  it('returns the resource with its metadata', async () => {
    const b = batch();
    const created = await b.create({ name: 'Gemini', status: 'completed', budget: 12.5, metadata: { department: 'Ops', priority: 1, tags: { a: 1 } } });
    const res = await stack.request('GET', path(created.id), { as: MEMBER });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
    expect(res.body.metadata).toEqual({ department: 'Ops', priority: 1, tags: { a: 1 }, suite: SUITE, batch: b.id });
  });

  it.each([
    ['an unknown UUID', randomUUID()],
    ['a non-UUID id', 'not-a-uuid'],
    ['a numeric id', '12345'],
    ['a UUID with trailing text', `${randomUUID()}x`],
    ['a very long id', 'x'.repeat(300)],
  ])('gives 404 for %s', async (_label, id) => {
    expectNotFound(await stack.request('GET', path(id), { as: ADMIN }));
  });

  it('gives 404 for an unknown type, even with an existing id', async () => {
    const created = await batch().create({ name: 'Typed' });
    expectNotFound(await stack.request('GET', path(created.id, 'no-such-type'), { as: ADMIN }));
  });
});

describe('PUT /resources/:type/:id', () => {
  it('replaces the whole resource: fields not sent are gone', async () => {
    const b = batch();
    const created = await b.create({ name: 'Mercury', status: 'active', budget: 100, startDate: '2024-01-01', owner: 'u1', metadata: { department: 'R&D', priority: 3 } });
    await sleep(5);
    const res = await stack.request('PUT', path(created.id), { as: ADMIN, body: { name: 'Mercury II', budget: 200, metadata: { suite: SUITE, batch: b.id } } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const expected = {
      id: created.id,
      type: 'project',
      name: 'Mercury II',
      budget: 200,
      metadata: { suite: SUITE, batch: b.id },
      createdAt: created.createdAt,
      updatedAt: res.body.updatedAt,
    };
    expect(res.body).toEqual(expected);
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt));
    expect((await stack.request('GET', path(created.id), { as: ADMIN })).body).toEqual(expected);
  });

  it('ignores server-owned fields in the body', async () => {
    const created = await batch().create({ name: 'Keep id' });
    const res = await stack.request('PUT', path(created.id), {
      as: ADMIN,
      body: { name: 'Kept', id: randomUUID(), type: 'other', createdAt: '2000-01-01T00:00:00.000Z' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, type: 'project', name: 'Kept', createdAt: created.createdAt });
  });

  it.each(INVALID_BUDGETS.map((budget) => [JSON.stringify(budget), budget]))('rejects budget %s and leaves the row unchanged', async (_label, budget) => {
    const created = await batch().create({ name: 'Steady', budget: 50, status: 'active' });
    const res = await stack.request('PUT', path(created.id), { as: ADMIN, body: { name: 'Changed', budget } });
    expectValidationError(res, 'budget', 'must be a positive number');
    expect((await stack.request('GET', path(created.id), { as: ADMIN })).body).toEqual(created);
  });

  it('rejects a body without name and leaves the row unchanged', async () => {
    const created = await batch().create({ name: 'Named', budget: 5 });
    expectValidationError(await stack.request('PUT', path(created.id), { as: ADMIN, body: { budget: 6 } }), 'name');
    expect((await stack.request('GET', path(created.id), { as: ADMIN })).body).toEqual(created);
  });

  it('gives 404 for an unknown id, a non-UUID id and an unknown type', async () => {
    const created = await batch().create({ name: 'Present' });
    expectNotFound(await stack.request('PUT', path(randomUUID()), { as: ADMIN, body: { name: 'x' } }));
    expectNotFound(await stack.request('PUT', path('not-a-uuid'), { as: ADMIN, body: { name: 'x' } }));
    expectNotFound(await stack.request('PUT', path(created.id, 'no-such-type'), { as: ADMIN, body: { name: 'x' } }));
  });
});

describe('PATCH /resources/:type/:id', () => {
  it('changes only the given fields, merges nested metadata and removes fields set to null', async () => {
    const b = batch();
    const created = await b.create({
      name: 'Vega',
      status: 'active',
      budget: 100,
      startDate: '2024-02-01',
      owner: 'u1',
      metadata: { department: 'R&D', priority: 2, nested: { a: 1, b: 2 } },
    });
    await sleep(5);
    const res = await stack.request('PATCH', path(created.id), {
      as: ADMIN,
      body: { status: 'completed', completedAt: '2024-06-30T12:00:00Z', owner: null, metadata: { priority: 5, department: null, nested: { b: null, c: 3 } } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const expected = {
      id: created.id,
      type: 'project',
      name: 'Vega',
      status: 'completed',
      budget: 100,
      startDate: '2024-02-01',
      completedAt: '2024-06-30T12:00:00Z',
      metadata: { priority: 5, nested: { a: 1, c: 3 }, suite: SUITE, batch: b.id },
      createdAt: created.createdAt,
      updatedAt: res.body.updatedAt,
    };
    expect(res.body).toEqual(expected);
    expect(res.body).not.toHaveProperty('owner');
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt));
    expect((await stack.request('GET', path(created.id), { as: ADMIN })).body).toEqual(expected);
  });

  it('ignores server-owned fields in the body', async () => {
    const created = await batch().create({ name: 'Owned' });
    const res = await stack.request('PATCH', path(created.id), { as: ADMIN, body: { id: randomUUID(), createdAt: '2000-01-01T00:00:00.000Z', budget: 7 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, createdAt: created.createdAt, name: 'Owned', budget: 7 });
  });

  it.each(INVALID_BUDGETS.filter((v) => v !== null).map((budget) => [JSON.stringify(budget), budget]))(
    'rejects budget %s and leaves the row unchanged',
    async (_label, budget) => {
      const created = await batch().create({ name: 'Stable', budget: 50, metadata: { priority: 1 } });
      const res = await stack.request('PATCH', path(created.id), { as: ADMIN, body: { budget, metadata: { priority: 9 } } });
      expectValidationError(res, 'budget', 'must be a positive number');
      expect((await stack.request('GET', path(created.id), { as: ADMIN })).body).toEqual(created);
    },
  );

  it('removes the budget when it is set to null', async () => {
    const created = await batch().create({ name: 'Unbudgeted', budget: 50 });
    const res = await stack.request('PATCH', path(created.id), { as: ADMIN, body: { budget: null } });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('budget');
  });

  it('rejects removing the required name and leaves the row unchanged', async () => {
    const created = await batch().create({ name: 'Required' });
    expectValidationError(await stack.request('PATCH', path(created.id), { as: ADMIN, body: { name: null } }), 'name');
    expect((await stack.request('GET', path(created.id), { as: ADMIN })).body).toEqual(created);
  });

  it('gives 404 for an unknown id, a non-UUID id and an unknown type', async () => {
    const created = await batch().create({ name: 'Present' });
    expectNotFound(await stack.request('PATCH', path(randomUUID()), { as: ADMIN, body: { status: 'x' } }));
    expectNotFound(await stack.request('PATCH', path('42'), { as: ADMIN, body: { status: 'x' } }));
    expectNotFound(await stack.request('PATCH', path(created.id, 'no-such-type'), { as: ADMIN, body: { status: 'x' } }));
  });
});

describe('DELETE /resources/:type/:id', () => {
  it('answers 204 with an empty body; afterwards the resource is gone', async () => {
    const created = await batch().create({ name: 'Doomed' });
    const res = await stack.request('DELETE', path(created.id), { as: ADMIN });
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expectNotFound(await stack.request('GET', path(created.id), { as: ADMIN }));
    expectNotFound(await stack.request('DELETE', path(created.id), { as: ADMIN }));
    expectNotFound(await stack.request('PATCH', path(created.id), { as: ADMIN, body: { status: 'x' } }));
    expectNotFound(await stack.request('PUT', path(created.id), { as: ADMIN, body: { name: 'x' } }));
  });

  it('gives 404 for an unknown id, a non-UUID id and an unknown type', async () => {
    const created = await batch().create({ name: 'Survivor' });
    expectNotFound(await stack.request('DELETE', path(randomUUID()), { as: ADMIN }));
    expectNotFound(await stack.request('DELETE', path('nope'), { as: ADMIN }));
    expectNotFound(await stack.request('DELETE', path(created.id, 'no-such-type'), { as: ADMIN }));
    expect((await stack.request('GET', path(created.id), { as: ADMIN })).status).toBe(200);
  });
});

describe('GET /resources', () => {
  it('requires type: missing gives 400 on "type", unknown gives 404', async () => {
    const missing = await stack.request('GET', `${V3}/resources`, { as: ADMIN });
    expectValidationError(missing, 'type');
    const empty = await stack.request('GET', `${V3}/resources?type=`, { as: ADMIN });
    expectValidationError(empty, 'type');
    expectNotFound(await stack.request('GET', `${V3}/resources?type=no-such-type`, { as: ADMIN }));
  });

  it('answers {data, total, hasMore, nextCursor} with whole records', async () => {
    const b = batch();
    const [a] = await b.createInOrder([{ name: 'A', budget: 1, metadata: { department: 'X' } }, { name: 'B' }]);
    const res = await b.list();
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'hasMore', 'nextCursor', 'total']);
    expect(res.body).toMatchObject({ total: 2, hasMore: false, nextCursor: null });
    expect(res.body.data[0]).toEqual(a);
  });

  describe('filters', () => {
    const b = batch();
    let rows: Row[];
    beforeAll(async () => {
      rows = await b.createInOrder([
        { name: 'Apollo', status: 'active', budget: 9, startDate: '2024-01-15', owner: 'alice', metadata: { department: 'R&D', priority: 1, flag: true } },
        { name: 'Gemini', status: 'completed', budget: 10, startDate: '2024-03-01', owner: 'bob', metadata: { department: 'Ops', priority: 2, flag: false } },
        { name: 'Mercury', status: 'in-progress', budget: 100, startDate: '2024-12-31', owner: 'alice', metadata: { department: 'R&D', priority: 10 } },
        { name: 'Artemis', status: 'active', budget: 25.5, startDate: '2025-02-28', metadata: { department: 'Space Ops', priority: 2 } },
        { name: 'Skylab', metadata: { department: 'ops', priority: 'high', code: '2024', visible: 'true' } },
      ]);
    });

    const sorted = (names: string[]) => [...names].sort();

    it('matches equality with a plain filter[field]', async () => {
      expect(await b.names({ 'filter[status]': 'active' })).toEqual(['Apollo', 'Artemis']);
      expect(await b.names({ 'filter[owner]': 'alice' })).toEqual(['Apollo', 'Mercury']);
      expect(await b.names({ 'filter[name]': 'Gemini' })).toEqual(['Gemini']);
      expect(await b.names({ 'filter[status]': 'Active' })).toEqual([]);
    });

    it('compares declared numbers as numbers, not text', async () => {
      expect(await b.names({ 'filter[budget]': '10' })).toEqual(['Gemini']);
      expect(await b.names({ 'filter[budget]': '10.0' })).toEqual(['Gemini']);
      expect(await b.names({ 'filter[budget.gt]': '9' })).toEqual(['Gemini', 'Mercury', 'Artemis']);
      expect(await b.names({ 'filter[budget.gte]': '10' })).toEqual(['Gemini', 'Mercury', 'Artemis']);
      expect(await b.names({ 'filter[budget.lt]': '10' })).toEqual(['Apollo']);
      expect(await b.names({ 'filter[budget.lte]': '10' })).toEqual(['Apollo', 'Gemini']);
      expect(await b.names({ 'filter[budget.lt]': '100' })).toEqual(['Apollo', 'Gemini', 'Artemis']);
      expect(await b.names({ 'filter[budget.gte]': '25.5' })).toEqual(['Mercury', 'Artemis']);
      expect(await b.names({ 'filter[budget.in]': '9,100' })).toEqual(['Apollo', 'Mercury']);
    });

    it.each([
      ['filter[budget.gte]', 'ten'],
      ['filter[budget]', '0x10'],
      ['filter[budget.in]', '9,Infinity'],
      ['filter[startDate.gte]', '1'],
      ['filter[startDate.gte]', '2024-02-30'],
      ['filter[startDate.lt]', 'March 7, 2024'],
      ['filter[createdAt.gt]', '2024-13-01T00:00:00Z'],
    ])('rejects %s=%s with 400, not a server error', async (key, value) => {
      const res = await b.list({ [key]: value });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    });

    it('matches an undeclared field stored as a string that looks like a number or boolean', async () => {
      expect(await b.names({ 'filter[metadata.code]': '2024' })).toEqual(['Skylab']);
      expect(await b.names({ 'filter[metadata.code.in]': '2023,2024' })).toEqual(['Skylab']);
      expect(await b.names({ 'filter[metadata.visible]': 'true' })).toEqual(['Skylab']);
      expect(sorted(await b.names({ 'filter[metadata.code.ne]': '2024' }))).toEqual(sorted(['Apollo', 'Gemini', 'Mercury', 'Artemis']));
      expect(await b.names({ 'filter[metadata.priority]': '2' })).toEqual(['Gemini', 'Artemis']);
    });

    it('takes an undeclared field with an impossible date as text', async () => {
      expect(await b.names({ 'filter[metadata.department]': '2024-02-30' })).toEqual([]);
      expect(await b.names({ 'filter[startDate.gte]': '2024-02-29' })).toEqual(['Gemini', 'Mercury', 'Artemis']);
    });

    it('supports .ne, which also matches rows without the field', async () => {
      expect(await b.names({ 'filter[status.ne]': 'active' })).toEqual(['Gemini', 'Mercury', 'Skylab']);
      expect(await b.names({ 'filter[owner.ne]': 'alice' })).toEqual(['Gemini', 'Artemis', 'Skylab']);
      expect(await b.names({ 'filter[budget.ne]': '10' })).toEqual(['Apollo', 'Mercury', 'Artemis', 'Skylab']);
    });

    it('supports .in with comma-separated values', async () => {
      expect(await b.names({ 'filter[status.in]': 'completed,in-progress' })).toEqual(['Gemini', 'Mercury']);
      expect(await b.names({ 'filter[status.in]': 'active' })).toEqual(['Apollo', 'Artemis']);
      expect(await b.names({ 'filter[name.in]': 'Apollo, Skylab,Nope' })).toEqual(['Apollo', 'Skylab']);
    });

    it('supports .contains as a case-insensitive substring match', async () => {
      expect(await b.names({ 'filter[name.contains]': 'ER' })).toEqual(['Mercury']);
      expect(await b.names({ 'filter[name.contains]': 'a' })).toEqual(['Apollo', 'Artemis', 'Skylab']);
      expect(await b.names({ 'filter[metadata.department.contains]': 'ops' })).toEqual(['Gemini', 'Artemis', 'Skylab']);
      expect(await b.names({ 'filter[name.contains]': '%' })).toEqual([]);
    });

    it('treats a field named like what every object inherits (constructor, toString) as a data field', async () => {
      expect(await b.names({ 'filter[constructor]': 'x' })).toEqual([]);
      expect(await b.names({ 'filter[toString]': 'x', 'filter[status]': 'active' })).toEqual([]);
      expect(sorted(await b.names({ sort: 'valueOf' }))).toEqual(['Apollo', 'Artemis', 'Gemini', 'Mercury', 'Skylab']);
    });

    it('combines several filters with AND', async () => {
      expect(await b.names({ 'filter[status]': 'active', 'filter[budget.gt]': '10' })).toEqual(['Artemis']);
      expect(await b.names({ 'filter[owner]': 'alice', 'filter[budget.gte]': '10', 'filter[metadata.department]': 'R&D' })).toEqual(['Mercury']);
      expect(await b.names({ 'filter[status]': 'active', 'filter[status.ne]': 'active' })).toEqual([]);
    });

    it('filters nested metadata fields, numbers numerically', async () => {
      expect(await b.names({ 'filter[metadata.priority]': '2' })).toEqual(['Gemini', 'Artemis']);
      expect(await b.names({ 'filter[metadata.priority.gte]': '2' })).toEqual(['Gemini', 'Mercury', 'Artemis']);
      expect(await b.names({ 'filter[metadata.priority.gt]': '9' })).toEqual(['Mercury']);
      expect(await b.names({ 'filter[metadata.priority.lt]': '10' })).toEqual(['Apollo', 'Gemini', 'Artemis']);
      expect(await b.names({ 'filter[metadata.priority.lte]': '2' })).toEqual(['Apollo', 'Gemini', 'Artemis']);
      expect(await b.names({ 'filter[metadata.priority.in]': '1,10' })).toEqual(['Apollo', 'Mercury']);
      expect(await b.names({ 'filter[metadata.priority]': 'high' })).toEqual(['Skylab']);
      expect(await b.names({ 'filter[metadata.department]': 'R&D' })).toEqual(['Apollo', 'Mercury']);
      expect(await b.names({ 'filter[metadata.flag]': 'true' })).toEqual(['Apollo']);
      expect(await b.names({ 'filter[metadata.flag]': 'false' })).toEqual(['Gemini']);
    });

    it('compares dates as dates', async () => {
      expect(await b.names({ 'filter[startDate]': '2024-03-01' })).toEqual(['Gemini']);
      expect(await b.names({ 'filter[startDate.gte]': '2024-03-01' })).toEqual(['Gemini', 'Mercury', 'Artemis']);
      expect(await b.names({ 'filter[startDate.gt]': '2024-03-01' })).toEqual(['Mercury', 'Artemis']);
      expect(await b.names({ 'filter[startDate.lt]': '2024-03-01' })).toEqual(['Apollo']);
      expect(await b.names({ 'filter[startDate.lte]': '2024-12-31' })).toEqual(['Apollo', 'Gemini', 'Mercury']);
      // 2024-02-29T23:00-02:00 is 2024-03-01T01:00Z: after Gemini's start, although it sorts before it as text.
      expect(await b.names({ 'filter[startDate.gt]': '2024-02-29T23:00:00-02:00' })).toEqual(['Mercury', 'Artemis']);
      expect(await b.names({ 'filter[startDate.gte]': '2024-02-29T23:00:00-02:00', 'filter[startDate.lt]': '2025-01-01' })).toEqual(['Mercury']);
      expect(await b.names({ 'filter[startDate.in]': '2024-01-15,2025-02-28' })).toEqual(['Apollo', 'Artemis']);
    });

    it('compares createdAt as a timestamp, exactly at the values it returns', async () => {
      const [, gemini, mercury] = rows;
      expect(await b.names({ 'filter[createdAt.gte]': gemini!.createdAt })).toEqual(['Gemini', 'Mercury', 'Artemis', 'Skylab']);
      expect(await b.names({ 'filter[createdAt.gt]': gemini!.createdAt })).toEqual(['Mercury', 'Artemis', 'Skylab']);
      expect(await b.names({ 'filter[createdAt.lt]': gemini!.createdAt })).toEqual(['Apollo']);
      expect(await b.names({ 'filter[createdAt.lte]': gemini!.createdAt })).toEqual(['Apollo', 'Gemini']);
      expect(await b.names({ 'filter[createdAt]': mercury!.createdAt })).toEqual(['Mercury']);
      expect(await b.names({ 'filter[createdAt.gte]': gemini!.createdAt, 'filter[createdAt.lte]': mercury!.createdAt })).toEqual(['Gemini', 'Mercury']);
      const res = await b.list({ 'filter[createdAt.gte]': 'yesterday-ish' });
      expect(res.status).toBe(400);
    });

    it('counts every matching row in total', async () => {
      const res = await b.list({ 'filter[status.ne]': 'active', limit: '1' });
      expect(res.body).toMatchObject({ total: 3, hasMore: true });
      expect(res.body.data).toHaveLength(1);
      expect(sorted(await b.names({ 'filter[status.ne]': 'active' }))).toEqual(['Gemini', 'Mercury', 'Skylab']);
    });
  });

  describe('sort', () => {
    const b = batch();
    beforeAll(async () => {
      await b.createInOrder([
        { name: 'Charlie', budget: 100, metadata: { priority: 2 } },
        { name: 'alpha', budget: 9, metadata: { priority: 3 } },
        { name: 'Bravo', budget: 10, metadata: { priority: 2 } },
        { name: 'Delta', metadata: {} },
        { name: 'Echo', budget: 9.5, metadata: { priority: 10 } },
      ]);
    });

    it('defaults to createdAt ascending', async () => {
      expect(await b.names()).toEqual(['Charlie', 'alpha', 'Bravo', 'Delta', 'Echo']);
    });

    it('sorts ascending and, with a leading "-", descending', async () => {
      expect(await b.names({ sort: 'createdAt' })).toEqual(['Charlie', 'alpha', 'Bravo', 'Delta', 'Echo']);
      expect(await b.names({ sort: '-createdAt' })).toEqual(['Echo', 'Delta', 'Bravo', 'alpha', 'Charlie']);
    });

    it('sorts numbers numerically; missing values last ascending and first descending', async () => {
      expect(await b.names({ sort: 'budget' })).toEqual(['alpha', 'Echo', 'Bravo', 'Charlie', 'Delta']);
      expect(await b.names({ sort: '-budget' })).toEqual(['Delta', 'Charlie', 'Bravo', 'Echo', 'alpha']);
      expect(await b.names({ sort: 'metadata.priority,createdAt' })).toEqual(['Charlie', 'Bravo', 'alpha', 'Echo', 'Delta']);
    });

    it('applies several keys in order', async () => {
      expect(await b.names({ sort: '-metadata.priority,createdAt' })).toEqual(['Delta', 'Echo', 'alpha', 'Charlie', 'Bravo']);
      expect(await b.names({ sort: '-metadata.priority,-createdAt' })).toEqual(['Delta', 'Echo', 'alpha', 'Bravo', 'Charlie']);
      expect(await b.names({ sort: 'metadata.priority,-budget' })).toEqual(['Charlie', 'Bravo', 'alpha', 'Echo', 'Delta']);
    });

    it('rejects a filter given twice, naming it, rather than keeping one of them', async () => {
      const res = await stack.request('GET', `${V3}/resources?type=project&filter[budget.gte]=1&filter[budget.gte]=5`, { as: ADMIN });
      expectValidationError(res, 'filter[budget.gte]');
    });

    it('rejects an invalid sort', async () => {
      expect((await b.list({ sort: 'name,,budget' })).status).toBe(400);
      expect((await b.list({ sort: 'a,b,c,d,e,f,g,h,i' })).status).toBe(400);
      expect((await b.list({ sort: 'na me' })).status).toBe(400);
    });
  });

  describe('limit and offset', () => {
    const b = batch();
    let all: Row[];
    beforeAll(async () => {
      for (let i = 0; i < 55; i += 11) {
        await Promise.all(Array.from({ length: 11 }, (_, j) => b.create({ name: `Row ${String(i + j).padStart(2, '0')}`, metadata: { n: i + j } })));
      }
      const res = await b.list({ sort: 'metadata.n', limit: '100' });
      all = res.body.data;
    });

    it('returns every matching row up to limit=100', async () => {
      expect(all.map((r) => r.metadata.n)).toEqual(Array.from({ length: 55 }, (_, i) => i));
    });

    it('defaults limit to 50', async () => {
      const res = await b.list({ sort: 'metadata.n' });
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(50);
      expect(res.body).toMatchObject({ total: 55, hasMore: true });
      expect(typeof res.body.nextCursor).toBe('string');
    });

    // Decimal digits only: 1e1, 0x10 and ' 5' would be 10, 16 and 5 to JavaScript's Number().
    it.each(['101', '0', '-1', '1.5', 'ten', '', '1e1', '0x10', ' 5'])('rejects limit=%s on "limit"', async (limit) => {
      expectValidationError(await b.list({ limit }), 'limit');
    });

    it.each(['', '1e1', '0x10', '-1'])('rejects offset=%s on "offset"', async (offset) => {
      expectValidationError(await b.list({ offset }), 'offset');
    });

    it('pages with offset; total counts every match and hasMore tells whether more follow', async () => {
      const first = await b.list({ sort: 'metadata.n', limit: '20', offset: '0' });
      expect(first.body.data.map((r: Row) => r.metadata.n)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      expect(first.body).toMatchObject({ total: 55, hasMore: true });
      const middle = await b.list({ sort: 'metadata.n', limit: '20', offset: '20' });
      expect(middle.body.data.map((r: Row) => r.metadata.n)).toEqual(Array.from({ length: 20 }, (_, i) => i + 20));
      const last = await b.list({ sort: 'metadata.n', limit: '20', offset: '40' });
      expect(last.body.data.map((r: Row) => r.metadata.n)).toEqual(Array.from({ length: 15 }, (_, i) => i + 40));
      expect(last.body).toMatchObject({ total: 55, hasMore: false, nextCursor: null });
      const exact = await b.list({ sort: 'metadata.n', limit: '5', offset: '50' });
      expect(exact.body).toMatchObject({ total: 55, hasMore: false });
      expect(exact.body.data).toHaveLength(5);
      const beyond = await b.list({ sort: 'metadata.n', limit: '5', offset: '60' });
      expect(beyond.body).toMatchObject({ data: [], total: 55, hasMore: false });
    });

    it('rejects a negative offset', async () => {
      expectValidationError(await b.list({ offset: '-1' }), 'offset');
    });

    it('returns a cursor on offset pages that continues after the page', async () => {
      const page = await b.list({ sort: 'metadata.n', limit: '10', offset: '30' });
      const next = await b.list({ sort: 'metadata.n', limit: '10', cursor: page.body.nextCursor });
      expect(next.status, JSON.stringify(next.body)).toBe(200);
      expect(next.body.data.map((r: Row) => r.metadata.n)).toEqual(Array.from({ length: 10 }, (_, i) => i + 40));
    });
  });

  describe('cursor pagination', () => {
    const b = batch();
    beforeAll(async () => {
      const priorities = [3, 1, 2, undefined, 3, 1, 2, 2, undefined, 5, 1, 3, 2, 4, 1, 2, 3, undefined, 5, 2, 1, 4, 3];
      await b.createInOrder(priorities.map((priority, i) => ({ name: `P${i}`, budget: (i % 4) + 1, metadata: priority === undefined ? {} : { priority, tag: `t${priority}` } })));
    });

    async function walk(query: Record<string, string>, between?: () => Promise<void>): Promise<{ names: string[]; pages: number }> {
      const names: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      for (;;) {
        const res = await b.list({ ...query, ...(cursor ? { cursor } : {}) });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        pages += 1;
        names.push(...res.body.data.map((r: Row) => r.name));
        if (!res.body.hasMore) {
          expect(res.body.nextCursor).toBeNull();
          break;
        }
        expect(typeof res.body.nextCursor).toBe('string');
        cursor = res.body.nextCursor;
        expect(pages).toBeLessThan(50);
        await between?.();
      }
      return { names, pages };
    }

    it.each([
      ['the default order', {}],
      ['a descending key', { sort: '-createdAt' }],
      ['several keys with ties and missing values', { sort: '-metadata.priority,createdAt' }],
      ['a number key with many ties', { sort: 'budget,-metadata.priority' }],
      ['a text key', { sort: '-name' }],
      ['every key ascending and never null (a row comparison)', { sort: 'createdAt' }],
      ['a text key and the id descending (a row comparison)', { sort: '-name,-id' }],
      ['every key descending, with missing values', { sort: '-metadata.tag,-id' }],
      ['a text key ascending with missing values', { sort: 'metadata.tag,-createdAt' }],
    ] as Array<[string, Record<string, string>]>)('walks every page with no duplicates and no gaps: %s', async (_label, query) => {
      const full = await b.names({ ...query, limit: '100' });
      expect(full).toHaveLength(23);
      for (const limit of ['1', '4', '5', '23']) {
        const { names, pages } = await walk({ ...query, limit });
        expect(names).toEqual(full);
        expect(pages).toBe(Math.ceil(23 / Number(limit)));
      }
    });

    it('keeps its place while rows are inserted between page fetches', async () => {
      const full = await b.names({ sort: 'name', limit: '100' });
      const inserted: string[] = [];
      const { names } = await walk({ sort: 'name', limit: '4' }, async () => {
        const name = `P${inserted.length}-new`;
        inserted.push(name);
        await b.create({ name, metadata: { priority: 9 } });
      });
      const seen = names.filter((n) => !inserted.includes(n));
      expect(seen).toEqual(full);
      expect(new Set(names).size).toBe(names.length);
    });

    it('with the default order, rows inserted during the walk come at its end', async () => {
      const c = batch();
      await c.createInOrder(Array.from({ length: 6 }, (_, i) => ({ name: `Old ${i}` })));
      const names: string[] = [];
      let res = await c.list({ limit: '2' });
      names.push(...res.body.data.map((r: Row) => r.name));
      for (let i = 0; res.body.hasMore; i += 1) {
        await c.create({ name: `New ${i}` });
        res = await c.list({ limit: '2', cursor: res.body.nextCursor });
        expect(res.status).toBe(200);
        names.push(...res.body.data.map((r: Row) => r.name));
      }
      expect(names.slice(0, 6)).toEqual(Array.from({ length: 6 }, (_, i) => `Old ${i}`));
      expect(new Set(names).size).toBe(names.length);
      // Every row inserted during the walk sorts after the cursor, so the walk meets each of them once.
      expect(names.slice(6)).toEqual(Array.from({ length: names.length - 6 }, (_, i) => `New ${i}`));
      expect(names.length).toBeGreaterThan(6);
    });

    it('may change limit between pages', async () => {
      const full = await b.names({ sort: '-metadata.priority,createdAt', limit: '100' });
      const first = await b.list({ sort: '-metadata.priority,createdAt', limit: '3' });
      const second = await b.list({ sort: '-metadata.priority,createdAt', limit: '10', cursor: first.body.nextCursor });
      expect(second.status).toBe(200);
      expect([...first.body.data, ...second.body.data].map((r: Row) => r.name)).toEqual(full.slice(0, 13));
    });

    it('rejects a cursor reused with a different sort, filter or type', async () => {
      const first = await b.list({ sort: '-metadata.priority,createdAt', limit: '3' });
      const cursor = first.body.nextCursor as string;
      expectValidationError(await b.list({ sort: 'metadata.priority,createdAt', limit: '3', cursor }), 'cursor');
      expectValidationError(await b.list({ sort: 'createdAt', limit: '3', cursor }), 'cursor');
      expectValidationError(await b.list({ limit: '3', cursor }), 'cursor');
      expectValidationError(await b.list({ sort: '-metadata.priority,createdAt', 'filter[budget.gte]': '2', limit: '3', cursor }), 'cursor');
      const otherBatch = await stack.request(
        'GET',
        `${V3}/resources?${new URLSearchParams({ type: 'project', 'filter[metadata.suite]': SUITE, 'filter[metadata.batch]': randomUUID(), sort: '-metadata.priority,createdAt', cursor })}`,
        { as: ADMIN },
      );
      expectValidationError(otherBatch, 'cursor');
    });

    it.each([
      ['garbage', 'not a cursor!'],
      ['base64 of non-JSON', Buffer.from('hello world').toString('base64url')],
      ['JSON of the wrong shape', Buffer.from(JSON.stringify({ hello: 'world' })).toString('base64url')],
      ['JSON null', Buffer.from('null').toString('base64url')],
    ])('rejects a %s cursor on "cursor"', async (_label, cursor) => {
      expectValidationError(await b.list({ cursor }), 'cursor');
    });

    it('rejects a cursor whose key values were tampered with', async () => {
      for (const sort of ['createdAt', 'budget', '-metadata.priority', 'name']) {
        const first = await b.list({ sort, limit: '2' });
        const payload = JSON.parse(Buffer.from(first.body.nextCursor, 'base64url').toString('utf8'));
        payload.k = payload.k.map(() => 'not-a-value{');
        const tampered = Buffer.from(JSON.stringify(payload)).toString('base64url');
        expectValidationError(await b.list({ sort, limit: '2', cursor: tampered }), 'cursor');
      }
    });

    it('rejects cursor together with offset on "cursor"', async () => {
      const first = await b.list({ limit: '3' });
      expectValidationError(await b.list({ limit: '3', offset: '3', cursor: first.body.nextCursor }), 'cursor');
      expectValidationError(await b.list({ limit: '3', offset: '0', cursor: first.body.nextCursor }), 'cursor');
    });
  });
});
