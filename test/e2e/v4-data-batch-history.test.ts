import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, GLOBEX_ADMIN, MEMBER, startTestStack, V3, type TestStack } from '../harness/stack.ts';

const DATA = '/v4/data/resources';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** v4 data: a resource's history, batches of creates, updates and deletes, and idempotency keys. */
describe('v4 resource history, batches and idempotency keys', () => {
  let stack: TestStack;
  let acme: string;
  let globex: string;
  let adminId: string;
  /** A PascalCase suffix of this run, so that its type names never meet another run's. */
  const run = `R${randomBytes(3).toString('hex')}`;
  let typeCount = 0;

  beforeAll(async () => {
    const plenty = { points: 100_000, durationSeconds: 60 };
    stack = await startTestStack({ rateLimits: { policies: { resources: plenty, users: plenty } } });
    acme = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: any) => t.slug === 'acme').id;
    globex = (await stack.request('GET', '/v4/identity/tenants', { as: GLOBEX_ADMIN })).body.data.find((t: any) => t.slug === 'globex').id;
    adminId = (await stack.request('GET', '/v4/identity/me', { as: ADMIN })).body.id;
  });
  afterAll(() => stack?.close());

  /** A new published type of acme's (its key): a number `amount`, a text `status`. */
  async function createType(): Promise<string> {
    const created = await stack.request('POST', `${DATA}/object-types`, {
      as: ADMIN,
      body: { name: `Ledger${run}N${++typeCount}`, schema: { type: 'object', properties: { amount: { type: 'number' }, status: { type: 'string', maxLength: 50 } } } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.key;
  }

  const total = async (type: string) => (await stack.request('GET', `${DATA}/${acme}/${type}`, { as: ADMIN })).body.total as number;
  const history = (type: string, id: string, query = '', as = ADMIN, tenant = acme) => stack.request('GET', `${DATA}/${tenant}/${type}/${id}/history${query}`, { as });

  it('records create, updates (v4 PUT, v3 PATCH) and delete as versions, newest first, by page, after the delete too', async () => {
    const type = await createType();
    const created = await stack.request('POST', `${DATA}/${acme}/${type}`, { as: ADMIN, body: { data: { amount: 1, status: 'open' } } });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect((await stack.request('PUT', `${DATA}/${acme}/${type}/${id}`, { as: ADMIN, body: { data: { amount: 2, status: 'open' }, version: 1 } })).status).toBe(200);
    const patched = await stack.request('PATCH', `${V3}/resources/${type}/${id}`, { as: ADMIN, body: { status: 'paid' } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);

    const first = await history(type, id, '?limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ total: 3, page: 1, limit: 2, hasMore: true });
    expect(first.body.data).toEqual([
      { version: 3, operation: 'update', action: null, data: { amount: 2, status: 'paid' }, by: adminId, at: expect.stringMatching(ISO) },
      { version: 2, operation: 'update', action: null, data: { amount: 2, status: 'open' }, by: adminId, at: expect.stringMatching(ISO) },
    ]);
    const second = await history(type, id, '?limit=2&page=2');
    expect(second.body).toMatchObject({ total: 3, page: 2, limit: 2, hasMore: false });
    expect(second.body.data).toEqual([{ version: 1, operation: 'create', action: null, data: { amount: 1, status: 'open' }, by: adminId, at: created.body.createdAt }]);

    expect((await stack.request('DELETE', `${DATA}/${acme}/${type}/${id}`, { as: ADMIN })).status).toBe(204);
    expect((await stack.request('GET', `${DATA}/${acme}/${type}/${id}`, { as: ADMIN })).status).toBe(404);
    const afterDelete = await history(type, id);
    expect(afterDelete.status).toBe(200);
    expect(afterDelete.body).toMatchObject({ total: 4, page: 1, limit: 20, hasMore: false });
    expect(afterDelete.body.data.map((v: any) => [v.version, v.operation])).toEqual([
      [4, 'delete'],
      [3, 'update'],
      [2, 'update'],
      [1, 'create'],
    ]);
    expect(afterDelete.body.data[0]).toMatchObject({ data: { amount: 2, status: 'paid' }, by: adminId });
    // The PascalCase name resolves as in every resource path.
    expect((await history(`Ledger${run}N${typeCount}`, id)).body.total).toBe(4);
  });

  it('answers 404 for an id never created, and keeps another tenant out (403 in its path, 404 in its own)', async () => {
    const type = await createType();
    expect((await history(type, randomUUID())).status).toBe(404);
    expect((await history(type, 'not-an-id')).status).toBe(404);
    expect((await history(`missing-${run.toLowerCase()}`, randomUUID())).status).toBe(404);
    expect((await history(type, randomUUID(), '?limit=0')).status).toBe(400);

    const { body: project } = await stack.request('POST', `${DATA}/${acme}/project`, { as: ADMIN, body: { data: { name: `history ${run}` } } });
    expect((await history('project', project.id, '', MEMBER)).body.total).toBe(1);
    const foreign = await history('project', project.id, '', GLOBEX_ADMIN);
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('FORBIDDEN');
    const ownPath = await history('project', project.id, '', GLOBEX_ADMIN, globex);
    expect(ownPath.status).toBe(404);
    expect(ownPath.body.error.code).toBe('NOT_FOUND');
    // Deleted, its history stays acme's alone.
    expect((await stack.request('DELETE', `${DATA}/${acme}/project/${project.id}`, { as: ADMIN })).status).toBe(204);
    expect((await history('project', project.id, '', GLOBEX_ADMIN, globex)).status).toBe(404);
    expect((await history('project', project.id)).body.total).toBe(2);
  });

  it('creates a batch from a list, {items} or one object, each recorded in its history', async () => {
    const type = await createType();
    const listed = await stack.request('POST', `${DATA}/${acme}/${type}/batch/create`, { as: ADMIN, body: [{ amount: 1 }, { amount: 2 }] });
    expect(listed.status, JSON.stringify(listed.body)).toBe(201);
    expect(listed.body.data.map((r: any) => [r.type, r.version, r.data])).toEqual([
      [type, 1, { amount: 1 }],
      [type, 1, { amount: 2 }],
    ]);
    const wrapped = await stack.request('POST', `${DATA}/${acme}/${type}/batch/create`, { as: ADMIN, body: { items: [{ amount: 3 }] } });
    expect(wrapped.status).toBe(201);
    const single = await stack.request('POST', `${DATA}/${acme}/${type}/batch/create`, { as: ADMIN, body: { amount: 4, status: 'single' } });
    expect(single.status).toBe(201);
    expect(single.body.data).toHaveLength(1);
    expect(single.body.data[0].data).toEqual({ amount: 4, status: 'single' });
    expect(await total(type)).toBe(4);
    expect((await history(type, listed.body.data[1].id)).body.data).toEqual([expect.objectContaining({ version: 1, operation: 'create', data: { amount: 2 } })]);

    const extra = await stack.request('POST', `${DATA}/${acme}/${type}/batch/create`, { as: ADMIN, body: { items: [{ amount: 5 }], note: 'x' } });
    expect(extra.status).toBe(400);
    expect(extra.body.error.details.field).toBe('note');
    expect((await stack.request('POST', `${DATA}/${acme}/${type}/batch/create`, { as: ADMIN, body: [] })).status).toBe(400);
    expect((await stack.request('POST', `${DATA}/${acme}/${type}/batch/create`, { as: ADMIN, body: [{ amount: 1 }, 7] })).body.error.details.field).toBe('items.1');
  });

  it('applies no item of a batch when one fails, and names the failing index and its error', async () => {
    const type = await createType();
    const items = [{ amount: 1 }, { amount: 2 }, { amount: 3 }, { amount: 'four' }, { amount: 5 }];
    const refused = await stack.request('POST', `${DATA}/${acme}/${type}/batch/create`, { as: ADMIN, body: items });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/^item 3: /),
      details: { index: 3, error: { code: 'VALIDATION_ERROR', details: { field: 'amount' } } },
    });
    expect(await total(type)).toBe(0);

    const created = (await stack.request('POST', `${DATA}/${acme}/${type}/batch/create`, { as: ADMIN, body: items.slice(0, 3) })).body.data;
    const stale = await stack.request('POST', `${DATA}/${acme}/${type}/batch/update`, {
      as: ADMIN,
      body: { items: [{ id: created[0].id, data: { amount: 10 }, version: 1 }, { id: created[1].id, data: { amount: 20 }, version: 2 }] },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'VERSION_CONFLICT', details: { index: 1, error: { code: 'VERSION_CONFLICT', details: { currentVersion: 1 } } } });
    const missing = await stack.request('POST', `${DATA}/${acme}/${type}/batch/update`, {
      as: ADMIN,
      body: [{ id: created[0].id, data: { amount: 10 }, version: 1 }, { id: randomUUID(), data: { amount: 20 }, version: 1 }],
    });
    expect(missing.status).toBe(404);
    expect(missing.body.error.details.index).toBe(1);
    expect((await stack.request('GET', `${DATA}/${acme}/${type}/${created[0].id}`, { as: ADMIN })).body).toMatchObject({ version: 1, data: { amount: 1 } });
    expect((await stack.request('POST', `${DATA}/${acme}/${type}/batch/update`, { as: ADMIN, body: [{ id: created[0].id, data: { amount: 10 } }] })).body.error.details.field).toBe(
      'items.0.version',
    );

    const updated = await stack.request('POST', `${DATA}/${acme}/${type}/batch/update`, {
      as: ADMIN,
      body: [{ id: created[1].id, data: { amount: 20 }, version: 1 }, { id: created[0].id, data: { amount: 10 }, version: 1 }],
    });
    expect(updated.status).toBe(200);
    expect(updated.body.data.map((r: any) => [r.id, r.version, r.data.amount])).toEqual([
      [created[1].id, 2, 20],
      [created[0].id, 2, 10],
    ]);

    const notThere = await stack.request('POST', `${DATA}/${acme}/${type}/batch/delete`, { as: ADMIN, body: { ids: [created[0].id, created[1].id, randomUUID()] } });
    expect(notThere.status).toBe(404);
    expect(notThere.body.error.details).toMatchObject({ index: 2, error: { code: 'NOT_FOUND' } });
    const repeated = await stack.request('POST', `${DATA}/${acme}/${type}/batch/delete`, { as: ADMIN, body: { ids: [created[0].id, created[0].id] } });
    expect(repeated.status).toBe(400);
    expect(repeated.body.error.details.field).toBe('ids.1');
    expect(await total(type)).toBe(3);

    const deleted = await stack.request('POST', `${DATA}/${acme}/${type}/batch/delete`, { as: ADMIN, body: { ids: [created[0].id, created[1].id] } });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ deleted: 2 });
    expect(await total(type)).toBe(1);
    expect((await history(type, created[0].id)).body.data.map((v: any) => [v.version, v.operation, v.data.amount])).toEqual([
      [3, 'delete', 10],
      [2, 'update', 10],
      [1, 'create', 1],
    ]);
  });

  it('takes up to 1000 items and refuses 1001 as a 400 on items', async () => {
    const type = await createType();
    const items = Array.from({ length: 1001 }, (_, n) => ({ amount: n }));
    const tooMany = await stack.request('POST', `${DATA}/${acme}/${type}/batch/create`, { as: ADMIN, body: items });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.details).toEqual({ field: 'items', issue: 'must hold at most 1000 items' });
    expect(await total(type)).toBe(0);
    const full = await stack.request('POST', `${DATA}/${acme}/${type}/batch/create`, { as: ADMIN, body: items.slice(0, 1000) });
    expect(full.status).toBe(201);
    expect(full.body.data).toHaveLength(1000);
    expect(await total(type)).toBe(1000);
    const ids = Array.from({ length: 1001 }, () => randomUUID());
    expect((await stack.request('POST', `${DATA}/${acme}/${type}/batch/delete`, { as: ADMIN, body: { ids } })).body.error.details.field).toBe('ids');
  });

  it('answers a retried create with its Idempotency-Key with the first answer, and refuses the key for another body', async () => {
    const type = await createType();
    const key = `create-${randomUUID()}`;
    const first = await stack.request('POST', `${DATA}/${acme}/${type}`, { as: ADMIN, body: { data: { amount: 1 } }, headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(201);
    const retry = await stack.request('POST', `${DATA}/${acme}/${type}`, { as: ADMIN, rawBody: '{ "data": {"amount": 1} }', headers: { 'Idempotency-Key': key } });
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('etag')).toBe('"1"');
    expect(await total(type)).toBe(1);
    expect((await history(type, first.body.id)).body.total).toBe(1);

    const other = await stack.request('POST', `${DATA}/${acme}/${type}`, { as: ADMIN, body: { data: { amount: 2 } }, headers: { 'Idempotency-Key': key } });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('Idempotency-Key was used with another request'), details: { field: 'Idempotency-Key' } });
    // Keys are the caller's own: another member's request under the same key is its own.
    const member = await stack.request('POST', `${DATA}/${acme}/${type}`, { as: MEMBER, body: { data: { amount: 2 } }, headers: { 'Idempotency-Key': key } });
    expect(member.status).toBe(201);
    expect(member.body.id).not.toBe(first.body.id);
    // A key in the body is not one.
    expect((await stack.request('POST', `${DATA}/${acme}/${type}`, { as: ADMIN, body: { data: { amount: 3 }, idempotencyKey: key } })).status).toBe(400);
    expect((await stack.request('POST', `${DATA}/${acme}/${type}`, { as: ADMIN, body: { data: {} }, headers: { 'Idempotency-Key': 'x'.repeat(256) } })).status).toBe(400);
    // A failed request leaves its key free.
    const failedKey = `failed-${randomUUID()}`;
    expect((await stack.request('POST', `${DATA}/${acme}/${type}`, { as: ADMIN, body: { data: { amount: 'x' } }, headers: { 'Idempotency-Key': failedKey } })).status).toBe(400);
    expect((await stack.request('POST', `${DATA}/${acme}/${type}`, { as: ADMIN, body: { data: { amount: 4 } }, headers: { 'Idempotency-Key': failedKey } })).status).toBe(201);
    expect(await total(type)).toBe(3);
  });

  it('replays an idempotent batch (in any of its body forms) and refuses its key for another batch', async () => {
    const type = await createType();
    const key = randomUUID();
    const first = await stack.request('POST', `${DATA}/${acme}/${type}/batch/create`, { as: ADMIN, body: [{ amount: 1 }, { amount: 2 }], headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(201);
    const retry = await stack.request('POST', `${DATA}/${acme}/${type}/batch/create`, { as: ADMIN, body: { items: [{ amount: 1 }, { amount: 2 }] }, headers: { 'Idempotency-Key': key } });
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(await total(type)).toBe(2);
    const other = await stack.request('POST', `${DATA}/${acme}/${type}/batch/create`, { as: ADMIN, body: [{ amount: 1 }], headers: { 'Idempotency-Key': key } });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('CONFLICT');
    // The same key on another route is another request.
    const ids = first.body.data.map((r: any) => r.id);
    expect((await stack.request('POST', `${DATA}/${acme}/${type}/batch/delete`, { as: ADMIN, body: { ids }, headers: { 'Idempotency-Key': key } })).status).toBe(409);

    const updateKey = randomUUID();
    const update = { items: ids.map((id: string) => ({ id, data: { amount: 9 }, version: 1 })) };
    const updated = await stack.request('POST', `${DATA}/${acme}/${type}/batch/update`, { as: ADMIN, body: update, headers: { 'Idempotency-Key': updateKey } });
    expect(updated.status).toBe(200);
    // Without the key the same update is stale; with it, the first answer comes back.
    expect((await stack.request('POST', `${DATA}/${acme}/${type}/batch/update`, { as: ADMIN, body: update })).status).toBe(409);
    const replayed = await stack.request('POST', `${DATA}/${acme}/${type}/batch/update`, { as: ADMIN, body: update, headers: { 'Idempotency-Key': updateKey } });
    expect(replayed.status).toBe(200);
    expect(replayed.body).toEqual(updated.body);

    const deleteKey = randomUUID();
    const deleted = await stack.request('POST', `${DATA}/${acme}/${type}/batch/delete`, { as: ADMIN, body: { ids }, headers: { 'Idempotency-Key': deleteKey } });
    expect(deleted.body).toEqual({ deleted: 2 });
    const again = await stack.request('POST', `${DATA}/${acme}/${type}/batch/delete`, { as: ADMIN, body: { ids }, headers: { 'Idempotency-Key': deleteKey } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ deleted: 2 });
    expect((await history(type, ids[0])).body.data.map((v: any) => v.operation)).toEqual(['delete', 'update', 'create']);
  });

  it('lets exactly one of 10 concurrent requests with one key do the work, and answers all ten alike', async () => {
    const type = await createType();
    const key = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => stack.request('POST', `${DATA}/${acme}/${type}`, { as: ADMIN, body: { data: { amount: 7 } }, headers: { 'Idempotency-Key': key } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(201));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(await total(type)).toBe(1);

    const batchKey = randomUUID();
    const batches = await Promise.all(
      Array.from({ length: 10 }, () =>
        stack.request('POST', `${DATA}/${acme}/${type}/batch/create`, { as: ADMIN, body: [{ amount: 1 }, { amount: 2 }], headers: { 'Idempotency-Key': batchKey } }),
      ),
    );
    expect(batches.map((a) => a.status)).toEqual(Array(10).fill(201));
    expect(new Set(batches.map((a) => JSON.stringify(a.body))).size).toBe(1);
    expect(await total(type)).toBe(3);
  });
});
