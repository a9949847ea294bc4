import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { fillPath, routeCalls, withQuery } from '../harness/routes.ts';
import { ADMIN, GLOBEX_ADMIN, MEMBER, startTestStack, V3, type TestStack } from '../harness/stack.ts';

/** Tenant isolation: a caller of one tenant never reads or changes another tenant's rows. */
describe('tenant isolation', () => {
  let stack: TestStack;
  let acmeProject: any;
  let acmeAdmin: any;
  let acmeMember: any;
  const suite = randomUUID();

  beforeAll(async () => {
    stack = await startTestStack();
    const created = await stack.request('POST', `${V3}/resources/project`, {
      as: ADMIN,
      body: { name: 'Acme secret', status: 'active', budget: 1234, metadata: { suite, priority: 5 } },
    });
    expect(created.status).toBe(201);
    acmeProject = created.body;
    acmeAdmin = (await stack.request('GET', `${V3}/users/me`, { as: ADMIN })).body;
    acmeMember = (await stack.request('GET', `${V3}/users/me`, { as: MEMBER })).body;
    await stack.request('GET', `${V3}/users/me`, { as: GLOBEX_ADMIN });
  });
  afterAll(() => stack?.close());

  it('answers 404 for every resource route naming the other tenant’s object, and changes nothing', async () => {
    const path = `${V3}/resources/project/${acmeProject.id}`;
    const attempts = [
      await stack.request('GET', path, { as: GLOBEX_ADMIN }),
      await stack.request('PUT', path, { as: GLOBEX_ADMIN, body: { name: 'taken over' } }),
      await stack.request('PATCH', path, { as: GLOBEX_ADMIN, body: { name: 'taken over' } }),
      await stack.request('DELETE', path, { as: GLOBEX_ADMIN }),
    ];
    for (const attempt of attempts) {
      expect(attempt.status).toBe(404);
      expect(attempt.body.error.code).toBe('NOT_FOUND');
    }
    const after = await stack.request('GET', path, { as: ADMIN });
    expect(after.status).toBe(200);
    expect(after.body).toEqual(acmeProject);
  });

  it('never lists or filters to the other tenant’s rows', async () => {
    const queries = [
      `type=project&filter[metadata.suite]=${suite}`,
      `type=project&filter[id]=${acmeProject.id}`,
      `type=project&filter[name.contains]=Acme secret`,
      `type=project&filter[budget.gte]=1234&filter[budget.lte]=1234&sort=-budget&limit=100`,
    ];
    for (const query of queries) {
      const globex = await stack.request('GET', `${V3}/resources?${query}`, { as: GLOBEX_ADMIN });
      expect(globex.status).toBe(200);
      expect(globex.body.data.map((r: any) => r.id)).not.toContain(acmeProject.id);
    }
    const own = await stack.request('GET', `${V3}/resources?type=project&filter[metadata.suite]=${suite}`, { as: ADMIN });
    expect(own.body.data.map((r: any) => r.id)).toEqual([acmeProject.id]);
    expect(own.body.total).toBe(1);
  });

  it('hides the other tenant’s users on every user route', async () => {
    for (const id of [acmeAdmin.id, acmeMember.id]) {
      expect((await stack.request('GET', `${V3}/users/${id}`, { as: GLOBEX_ADMIN })).status).toBe(404);
      const patch = await stack.request('PATCH', `${V3}/users/${id}`, { as: GLOBEX_ADMIN, body: { name: 'renamed' } });
      expect(patch.status).toBe(404);
    }
    const list = await stack.request('GET', `${V3}/users?search=acme&limit=100`, { as: GLOBEX_ADMIN });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([]);
    expect(list.body.total).toBe(0);
    const all = await stack.request('GET', `${V3}/users?limit=100`, { as: GLOBEX_ADMIN });
    expect(all.body.data.map((u: any) => u.email)).toContain(GLOBEX_ADMIN);
    expect(all.body.data.every((u: any) => u.email.endsWith('@globex.test'))).toBe(true);
    expect((await stack.request('GET', `${V3}/users/me`, { as: ADMIN })).body.name).toBe(acmeAdmin.name);
  });

  it('refuses a tenant the caller is not a member of, named by header, on every v3 route; nothing changes', async () => {
    const response = await stack.request('GET', `${V3}/resources?type=project`, { as: GLOBEX_ADMIN, headers: { 'x-tenant-id': 'acme' } });
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('FORBIDDEN');
    const project = `${V3}/resources/project/${acmeProject.id}`;
    // Every v3 route, naming acme's own objects; a create would plant a row of this suite.
    const routes = routeCalls({ tenantId: 'acme' }).filter((call) => call.case.tenantFrom === 'header').map((call): [string, string, unknown?] => {
      const id = call.template.startsWith(`${V3}/users/`) ? acmeMember.id : call.template.startsWith(`${V3}/resources/`) ? acmeProject.id : undefined;
      const path = withQuery({ ...call, path: fillPath(call.template, { ...call.case.sample, ...(id ? { id } : {}) }) });
      const body = call.route === `POST ${V3}/resources/:type` ? { name: 'Planted by globex', metadata: { suite } } : call.case.body;
      return [call.method, path, body];
    });
    for (const [method, path, body] of routes) {
      const refused = await stack.request(method, path, { as: GLOBEX_ADMIN, headers: { 'x-tenant-id': 'acme' }, body });
      expect(refused.status, `${method} ${path}: ${JSON.stringify(refused.body)}`).toBe(403);
      expect(refused.body.error.code).toBe('FORBIDDEN');
    }
    expect((await stack.request('GET', project, { as: ADMIN })).body).toEqual(acmeProject);
    expect((await stack.request('GET', `${V3}/resources?type=project&filter[metadata.suite]=${suite}`, { as: ADMIN })).body.total).toBe(1);
    expect((await stack.request('GET', `${V3}/users/me`, { as: MEMBER })).body.name).toBe(acmeMember.name);
    const byId = await stack.request('GET', `${V3}/resources?type=project`, { as: GLOBEX_ADMIN, headers: { 'x-tenant-id': acmeAdmin.tenantId } });
    expect(byId.status).toBe(403);
  });

  it('refuses every v4 route that names the other tenant in its path or tenant_id; nothing changes', async () => {
    const tenants = await stack.request('GET', '/v4/identity/tenants', { as: ADMIN });
    const acme = tenants.body.data.find((t: any) => t.slug === 'acme');
    const calls = routeCalls({ tenantId: acme.id }).filter((call) => call.case.tenantFrom === 'path' || call.case.tenantFrom === 'query');
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      const refused = await stack.request(call.method, withQuery(call), { as: GLOBEX_ADMIN, body: call.case.body });
      expect([403, 404], `${call.method} ${call.path}: ${JSON.stringify(refused.body)}`).toContain(refused.status);
      expect(refused.body.error.code).toMatch(/^(FORBIDDEN|NOT_FOUND)$/);
    }
    const after = await stack.request('GET', '/v4/identity/tenants', { as: ADMIN });
    expect(after.body.data.find((t: any) => t.slug === 'acme')).toEqual(acme);
    expect((await stack.request('GET', `${V3}/resources/project/${acmeProject.id}`, { as: ADMIN })).body).toEqual(acmeProject);
  });

  it('is enforced by PostgreSQL itself, whatever the SQL asks for', async () => {
    const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
    try {
      const [globex] = await sql<{ id: string }[]>`select id::text from tenants where slug = 'globex'`;
      const asGlobex = <T>(fn: (tx: postgres.TransactionSql) => Promise<T>) =>
        sql.begin(async (tx) => {
          await tx`select set_config('svc.tenant_id', ${globex!.id}, true), set_config('role', 'svc_app', true)`;
          return fn(tx);
        });
      const visible = await asGlobex((tx) => tx`select id from resources where id = ${acmeProject.id}::uuid`);
      expect(visible).toHaveLength(0);
      const updated = await asGlobex((tx) => tx`update resources set data = '{}' where id = ${acmeProject.id}::uuid returning id`);
      expect(updated).toHaveLength(0);
      await expect(
        asGlobex((tx) => tx`insert into resources (tenant_id, type, data) values (${acmeAdmin.tenantId}::uuid, 'project', '{"name":"planted"}')`),
      ).rejects.toThrow(/row-level security/);
      const users = await asGlobex((tx) => tx`select email from users where email like '%@acme.test'`);
      expect(users).toHaveLength(0);
    } finally {
      await sql.end();
    }
  });
});
