import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADMIN, GLOBEX_ADMIN, MEMBER, startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const APP_KEYS = ['appUrl', 'childTenantId', 'childTenantSlug', 'companyTenantId', 'createdAt', 'id', 'key', 'name', 'source', 'status', 'template', 'updatedAt'];

/** v4 app (vertical) enrollments: POST /v4/platform/tenants/{companyTenantId}/apps. */
describe('v4 apps', { timeout: 120_000 }, () => {
  const run = randomUUID().slice(0, 8);
  let stack: TestStack;
  let sql: postgres.Sql;
  let acmeId: string;
  let globexId: string;

  const createApp = (tenantId: string, body: unknown, as = ADMIN) => stack.request('POST', `/v4/platform/tenants/${tenantId}/apps`, { as, body });
  const enrollments = async (tenantId: string, as: string) =>
    (await stack.request('GET', `${V3}/resources?type=tenant-vertical-enrollment&limit=100`, { as, headers: { 'x-tenant-id': tenantId } })).body;
  // Other test files write to the same database at the same time, so "changed nothing" counts
  // only the rows that the refused requests could have made.
  const appRows = async (names: string[]) =>
    (
      await sql<{ count: number }[]>`select count(*)::int as count from resources
        where type = 'tenant-vertical-enrollment' and data ->> 'name' in ${sql(names)}`
    )[0]!.count;
  const tenantRows = async () =>
    (await sql<{ count: number }[]>`select count(*)::int as count from tenants where slug = ${`never-${run}`} or name in ('Never made', 'C')`)[0]!.count;

  beforeAll(async () => {
    stack = await startTestStack();
    sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
    acmeId = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: any) => t.slug === 'acme').id;
    globexId = (await stack.request('GET', '/v4/identity/tenants', { as: GLOBEX_ADMIN })).body.data.find((t: any) => t.slug === 'globex').id;
  });
  afterAll(async () => {
    await stack?.close();
    await sql?.end();
  });

  it('enrolls an app with the defaults: key from the name, source svc-cli, status pending', async () => {
    const created = await createApp(acmeId, { name: `Field Service ${run}` });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(APP_KEYS);
    expect(created.body).toMatchObject({
      key: `field-service-${run}`,
      name: `Field Service ${run}`,
      template: null,
      source: 'svc-cli',
      appUrl: null,
      status: 'pending',
      companyTenantId: acmeId,
      childTenantId: null,
      childTenantSlug: null,
    });
    // Enrollments are resources of the company tenant, which the resource routes list.
    const listed = await enrollments(acmeId, ADMIN);
    const { createdAt, updatedAt, ...listedApp } = listed.data.find((r: any) => r.id === created.body.id);
    expect(listedApp).toEqual({
      id: created.body.id,
      type: 'tenant-vertical-enrollment',
      key: `field-service-${run}`,
      name: `Field Service ${run}`,
      source: 'svc-cli',
      status: 'pending',
    });
    expect([createdAt, updatedAt]).toEqual([created.body.createdAt, created.body.updatedAt]);
    // Its history holds the enrollment, as any resource's.
    const history = await stack.request('GET', `/v4/data/resources/${acmeId}/tenant-vertical-enrollment/${created.body.id}/history`, { as: ADMIN });
    expect(history.status, JSON.stringify(history.body)).toBe(200);
    expect(history.body.data.map((entry: any) => [entry.version, entry.operation, entry.data.key])).toEqual([[1, 'create', `field-service-${run}`]]);
  });

  it('keeps every given field', async () => {
    const body = { name: 'Inspections', key: `inspections-${run}`, template: 'council-inspections', source: 'console', status: 'active' };
    const created = await createApp(acmeId, { ...body, app_url: 'https://inspections.example/app' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ ...body, appUrl: 'https://inspections.example/app', childTenantId: null });
    // The camelCase name the route shipped with is still taken, as a deprecated alias.
    const former = await createApp(acmeId, { name: 'Inspections, former names', key: `inspections-former-${run}`, appUrl: 'https://former.example/app' });
    expect(former.status, JSON.stringify(former.body)).toBe(201);
    expect(former.body.appUrl).toBe('https://former.example/app');
  });

  it('refuses a taken key with 409 and bad input with 400, changing nothing', async () => {
    const refusedNames = ['Again', 'A', '   ', '!!!'];
    const before = { apps: await appRows(refusedNames), tenants: await tenantRows() };
    const taken = await createApp(acmeId, { name: 'Again', key: `field-service-${run}`, childTenant: { name: 'Never made', slug: `never-${run}` } });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'key' } });

    const cases: Array<[unknown, string]> = [
      [{}, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'A', key: 'Not Kebab' }, 'key'],
      [{ name: 'A', status: 'archived' }, 'status'],
      [{ name: 'A', appUrl: 'ftp://files.example' }, 'app_url'],
      [{ name: 'A', app_url: 'not a url' }, 'app_url'],
      [{ name: 'A', app_url: 'https://a.example', appUrl: 'https://b.example' }, 'app_url'],
      // Refused by the App CRD's rule as well: not written out in full, or a port beyond 65535.
      ...['http:apps.example', ' https://apps.example', 'https://apps.example\\path', 'https:///apps.example', 'https://apps.example:99999'].map((appUrl) => [{ name: 'A', app_url: appUrl }, 'app_url'] as [unknown, string]),
      [{ name: 'A', template: 'Bad Template' }, 'template'],
      [{ name: 'A', parent_tenant: acmeId }, 'parent_tenant'],
      [{ name: 'A', child_tenant: { name: 'C', slug: 'Bad Slug' } }, 'child_tenant.slug'],
      // A slug derived from the name may not have the form of a tenant id either.
      [{ name: 'A', childTenant: { name: '0b7e2c4a 1f3d 4e5a 9b8c 7d6e5f4a3b2c' } }, 'child_tenant.slug'],
      [{ name: 'A', colour: 'blue' }, 'colour'],
      [{ name: '!!!' }, 'key'],
    ];
    for (const [body, field] of cases) {
      const refused = await createApp(acmeId, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error.code).toBe('VALIDATION_ERROR');
      expect(refused.body.error.details.field, JSON.stringify(body)).toBe(field);
    }
    expect((await stack.request('POST', `/v4/platform/tenants/${acmeId}/apps`, { as: ADMIN, rawBody: '{"name":' })).status).toBe(400);
    // Text PostgreSQL cannot store is refused before the child tenant is made.
    const nul = await createApp(acmeId, { name: 'A', appUrl: 'https://a.example/\u0000', childTenant: { name: 'C', slug: `never-${run}` } });
    expect(nul.status, JSON.stringify(nul.body)).toBe(400);
    expect(nul.body.error.details).toMatchObject({ field: 'app_url', issue: expect.stringContaining('NUL') });
    expect({ apps: await appRows(refusedNames), tenants: await tenantRows() }).toEqual(before);
  });

  it('creates the child tenant under the company tenant, provisioned, with the caller as its tenant-admin', async () => {
    const created = await createApp(acmeId, { name: `Portal ${run}`, template: 'retail-portal', child_tenant: { name: `Portal Tenant ${run}` } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const childSlug = `portal-tenant-${run}`;
    expect(created.body).toMatchObject({ key: `portal-${run}`, childTenantSlug: childSlug });
    const childId = created.body.childTenantId;
    const memberships = await until(
      () => stack.request('GET', '/v4/identity/tenants', { as: ADMIN }),
      (r) => r.body.data.some((t: any) => t.id === childId && t.status === 'active'),
    );
    expect(memberships.body.data.find((t: any) => t.id === childId)).toMatchObject({ slug: childSlug, parentId: acmeId, roles: ['tenant-admin'] });
    const [row] = await sql<{ starter_template: string }[]>`select starter_template from tenants where id = ${childId}::uuid`;
    expect(row!.starter_template).toBe('retail-portal');

    // A taken child slug is a 409 and enrolls nothing.
    const before = await appRows([`Clash ${run}`]);
    const clash = await createApp(acmeId, { name: `Clash ${run}`, childTenant: { name: 'Clash', slug: childSlug } });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'child_tenant.slug' } });
    expect(await appRows([`Clash ${run}`])).toBe(before);

    // parentTenant: a tenant below the company tenant that the caller manages; nothing outside it.
    const nested = await createApp(acmeId, { name: `Nested ${run}`, parentTenant: childSlug, childTenant: { name: 'Nested', slug: `nested-${run}` } });
    expect(nested.status, JSON.stringify(nested.body)).toBe(201);
    const [nestedRow] = await sql<{ parent_id: string }[]>`select parent_id::text from tenants where id = ${nested.body.childTenantId}::uuid`;
    expect(nestedRow!.parent_id).toBe(childId);
    const outside = await createApp(acmeId, { name: `Outside ${run}`, parentTenant: globexId, childTenant: { name: 'Outside', slug: `outside-${run}` } });
    expect(outside.status).toBe(404);
    expect(outside.body.error.code).toBe('NOT_FOUND');
  });

  it('needs tenants.manage in the company tenant, and keeps enrollments inside it', async () => {
    const refusedNames = [`By member ${run}`, `By globex ${run}`, 'Anonymous'];
    const before = await appRows(refusedNames);
    const member = await createApp(acmeId, { name: `By member ${run}` }, MEMBER);
    expect(member.status).toBe(403);
    expect(member.body.error.code).toBe('FORBIDDEN');
    expect((await createApp(acmeId, { name: `By globex ${run}` }, GLOBEX_ADMIN)).status).toBe(403);
    expect((await stack.request('POST', `/v4/platform/tenants/${acmeId}/apps`, { body: { name: 'Anonymous' } })).status).toBe(401);
    expect(await appRows(refusedNames)).toBe(before);

    // The same key is free in another tenant; neither tenant sees the other's enrollments.
    const globexApp = await createApp(globexId, { name: `Field Service ${run}` }, GLOBEX_ADMIN);
    expect(globexApp.status, JSON.stringify(globexApp.body)).toBe(201);
    const seenByGlobex = await enrollments(globexId, GLOBEX_ADMIN);
    expect(seenByGlobex.data.map((r: any) => r.id)).toEqual([globexApp.body.id]);
    const seenByAcme = await enrollments(acmeId, ADMIN);
    expect(seenByAcme.data.map((r: any) => r.id)).not.toContain(globexApp.body.id);
    expect((await stack.request('GET', `${V3}/resources/tenant-vertical-enrollment/${globexApp.body.id}`, { as: ADMIN })).status).toBe(404);
  });

  it('keeps enrollments to the apps API: the resource routes read them but refuse every write (403), changing nothing', async () => {
    const app = await createApp(acmeId, { name: `Written ${run}`, childTenant: { name: `Written Tenant ${run}` } });
    expect(app.status, JSON.stringify(app.body)).toBe(201);
    const path = `${V3}/resources/tenant-vertical-enrollment/${app.body.id}`;
    const before = (await stack.request('GET', path, { as: MEMBER })).body;
    expect(before.childTenantSlug).toBe(app.body.childTenantSlug);
    const writes = [
      await stack.request('PATCH', path, { as: MEMBER, body: { childTenantSlug: 'globex' } }),
      await stack.request('PUT', path, { as: ADMIN, body: { ...before, childTenantSlug: 'globex' } }),
      await stack.request('DELETE', path, { as: ADMIN }),
      await stack.request('POST', `${V3}/resources/tenant-vertical-enrollment`, { as: ADMIN, body: { key: `planted-${run}`, name: 'Planted', childTenantSlug: 'globex' } }),
    ];
    for (const write of writes) {
      expect(write.status, JSON.stringify(write.body)).toBe(403);
      expect(write.body.error.code).toBe('FORBIDDEN');
    }
    expect((await stack.request('GET', path, { as: MEMBER })).body).toEqual(before);
    expect(await appRows(['Planted'])).toBe(0);
  });
});
