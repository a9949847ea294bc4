import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, GLOBEX_ADMIN, MEMBER, startTestStack, V3, type TestStack } from '../harness/stack.ts';

const DATA = '/v4/data/resources';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** v4 data: a resource's history. */
describe('v4 resource history', () => {
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
});
