import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TENANT_ID, WORKFLOW_KEY } from '../../control-plane/temporal/temporal-workflows.ts';
import { ADMIN, GLOBEX_ADMIN, MEMBER, startTestStack, V3, type ApiResponse, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const PLATFORM_ADMIN = 'platform@svc.test';
const TENANT_KEYS = ['createdAt', 'domains', 'homeRegion', 'id', 'industry', 'name', 'parentId', 'slug', 'starterTemplate', 'status', 'statusReason', 'updatedAt', 'usecase'];

/** v4 platform: the tenant lifecycle (create, provision on Temporal, bootstrap, soft delete) and user grants. */
describe('v4 tenant lifecycle', { timeout: 120_000 }, () => {
  const run = randomUUID().slice(0, 8);
  const slug = (name: string) => `${name}-${run}`;
  let stack: TestStack;
  let sql: postgres.Sql;
  let acmeId: string;
  let globexId: string;
  const userIds: Record<string, string> = {};

  /** Polls the caller's `GET /v4/identity/tenants` until the tenant leaves `provisioning`; returns its entry. */
  async function settled(as: string, tenantId: string): Promise<any> {
    const listed = await until(
      () => stack.request('GET', '/v4/identity/tenants', { as }),
      (r) => r.body.data.some((t: any) => t.id === tenantId && t.status !== 'provisioning'),
    );
    return listed.body.data.find((t: any) => t.id === tenantId);
  }

  /** A child of `parentId` created, bootstrapped and waited for by `as`. */
  async function usableChild(as: string, parentId: string, name: string): Promise<any> {
    const created = await stack.request('POST', `/v4/platform/tenants/${parentId}/children`, { as, body: { name, slug: slug(name) } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await stack.request('POST', `/v4/platform/tenants/${parentId}/children/${created.body.id}/bootstrap-admin`, { as })).status).toBe(201);
    expect((await settled(as, created.body.id)).status).toBe('active');
    return created.body;
  }

  const resourcesIn = (tenantId: string, as: string): Promise<ApiResponse> =>
    stack.request('GET', `${V3}/resources?type=project`, { as, headers: { 'x-tenant-id': tenantId } });

  beforeAll(async () => {
    stack = await startTestStack();
    sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
    for (const email of [ADMIN, MEMBER, GLOBEX_ADMIN, PLATFORM_ADMIN]) {
      userIds[email] = (await stack.request('GET', '/v4/identity/me', { as: email })).body.id;
    }
    const tenants = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data;
    acmeId = tenants.find((t: any) => t.slug === 'acme').id;
    globexId = (await stack.request('GET', '/v4/identity/tenants', { as: GLOBEX_ADMIN })).body.data.find((t: any) => t.slug === 'globex').id;
  });
  afterAll(async () => {
    await stack?.close();
    await sql?.end();
  });

  describe('root tenants', () => {
    it('creates a root tenant that provisioning on Temporal brings to active, with its creator as tenant-admin', async () => {
      const created = await stack.request('POST', '/v4/platform/tenants', {
        as: PLATFORM_ADMIN,
        body: { name: 'Northwind', slug: slug('northwind'), homeRegion: 'ca', industry: 'Logistics', domains: ['northwind.example'] },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(Object.keys(created.body).sort()).toEqual(TENANT_KEYS);
      expect(created.body).toMatchObject({
        name: 'Northwind',
        slug: slug('northwind'),
        parentId: null,
        domains: ['northwind.example'],
        usecase: 'generic',
        industry: 'Logistics',
        starterTemplate: 'blank-vertical-template',
        homeRegion: 'ca',
        status: 'provisioning',
        statusReason: null,
      });
      const tenantId = created.body.id;

      const entry = await settled(PLATFORM_ADMIN, tenantId);
      expect(entry).toEqual({
        id: tenantId,
        slug: slug('northwind'),
        name: 'Northwind',
        status: 'active',
        statusReason: null,
        parentId: null,
        homeRegion: 'ca',
        roles: ['tenant-admin'],
      });

      const connection = await Connection.connect({ address: inject('temporalAddress') });
      try {
        const handle = new Client({ connection, namespace: inject('temporalNamespace') }).workflow.getHandle(`tenant-${tenantId}-provision`);
        await handle.result();
        const description = await handle.describe();
        expect(description.type).toBe('provisionTenant');
        expect(description.status.name).toBe('COMPLETED');
        expect(description.typedSearchAttributes.get(TENANT_ID)).toBe(tenantId);
        expect(description.typedSearchAttributes.get(WORKFLOW_KEY)).toBe('tenant-provision');
        // Every step, storage included, ran in this one workflow as a local activity: recorded as a
        // marker, never queued on the server, no child workflow.
        const { events } = await handle.fetchHistory();
        expect(events!.filter((e) => e.activityTaskScheduledEventAttributes || e.startChildWorkflowExecutionInitiatedEventAttributes)).toEqual([]);
        // Roles, example workflows, storage begun and its four backends, activation.
        expect(events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')).toHaveLength(8);
      } finally {
        await connection.close();
      }

      // The storage routes show that run as the one that provisioned the tenant's storage.
      const storage = await stack.request('GET', `/v4/data/resources/${tenantId}/storage`, { as: PLATFORM_ADMIN });
      expect(storage.status, JSON.stringify(storage.body)).toBe(200);
      expect(storage.body).toMatchObject({ tenantId, ready: true, workflow: { id: `tenant-${tenantId}-provision`, status: 'completed' } });

      const me = await stack.request('GET', `${V3}/users/me`, { as: PLATFORM_ADMIN, headers: { 'x-tenant-id': tenantId } });
      expect(me.status).toBe(200);
      expect(me.body.permissions).toContain('tenants.manage');
      const workflows = await stack.request('GET', `${V3}/orchestrate/workflows`, { as: PLATFORM_ADMIN, headers: { 'x-tenant-id': tenantId } });
      expect(workflows.body.data.map((w: any) => w.id)).toContain('project-briefing');
    });

    it('needs the platform permission: tenant admins and members get 403, anonymous callers 401', async () => {
      const body = { name: 'Rogue', slug: slug('rogue'), homeRegion: 'eu' };
      for (const as of [ADMIN, GLOBEX_ADMIN, MEMBER]) {
        const refused = await stack.request('POST', '/v4/platform/tenants', { as, body });
        expect(refused.status).toBe(403);
        expect(refused.body.error.code).toBe('FORBIDDEN');
      }
      expect((await stack.request('POST', '/v4/platform/tenants', { body })).status).toBe(401);
      expect(await sql`select 1 from tenants where slug = ${slug('rogue')}`).toHaveLength(0);
    });

    it('validates every field per the contract and creates nothing on a bad input', async () => {
      const valid = { name: 'Valid', slug: slug('valid'), homeRegion: 'au' };
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...valid, homeRegion: undefined }, 'home_region'],
        [{ ...valid, homeRegion: 'us' }, 'home_region'],
        [{ ...valid, usecase: 'education' }, 'usecase'],
        [{ ...valid, slug: 'Not_Kebab' }, 'slug'],
        [{ ...valid, slug: 'double--hyphen' }, 'slug'],
        [{ ...valid, slug: '-leading' }, 'slug'],
        [{ ...valid, name: '   ' }, 'name'],
        [{ ...valid, name: undefined }, 'name'],
        [{ ...valid, domains: ['not a domain'] }, 'domains.0'],
        [{ ...valid, domains: 'example.com' }, 'domains'],
        [{ ...valid, starterTemplate: 'Blank Template' }, 'starter_template'],
        [{ ...valid, industry: '' }, 'industry'],
        [{ ...valid, colour: 'blue' }, 'colour'],
      ];
      for (const [body, field] of cases) {
        const response = await stack.request('POST', '/v4/platform/tenants', { as: PLATFORM_ADMIN, body });
        expect(response.status, `${field}: ${JSON.stringify(response.body)}`).toBe(400);
        expect(response.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field } });
      }
      const missing = await stack.request('POST', '/v4/platform/tenants', { as: PLATFORM_ADMIN, body: { name: 'X', slug: slug('x') } });
      expect(missing.body.error.message).toBe('home_region is required');
      const notJson = await stack.request('POST', '/v4/platform/tenants', { as: PLATFORM_ADMIN, rawBody: '{' });
      expect(notJson.status).toBe(400);
      expect(await sql`select 1 from tenants where slug = ${slug('valid')}`).toHaveLength(0);
    });

    it('answers 409 CONFLICT for a slug already taken', async () => {
      const body = { name: 'Twice', slug: slug('twice'), homeRegion: 'eu' };
      expect((await stack.request('POST', '/v4/platform/tenants', { as: PLATFORM_ADMIN, body })).status).toBe(201);
      const again = await stack.request('POST', '/v4/platform/tenants', { as: PLATFORM_ADMIN, body: { ...body, name: 'Again' } });
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({ code: 'CONFLICT', details: { field: 'slug' } });
      const child = await stack.request('POST', `/v4/platform/tenants/${acmeId}/children`, { as: ADMIN, body: { name: 'Acme', slug: 'acme' } });
      expect(child.status).toBe(409);
    });
  });

  describe('child tenants', () => {
    it('creates children with the parent’s home region by default, accepting every usecase and region', async () => {
      const created = await stack.request('POST', `/v4/platform/tenants/${acmeId}/children`, {
        as: ADMIN,
        body: { name: 'Acme Shop', slug: slug('acme-shop'), usecase: 'retail', starterTemplate: 'retail-starter' },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body).toMatchObject({ parentId: acmeId, homeRegion: 'au', usecase: 'retail', starterTemplate: 'retail-starter', status: 'provisioning' });

      const usecases = ['council', 'retail', 'healthcare', 'finance', 'manufacturing', 'generic'];
      const regions = ['au', 'ca', 'eu'];
      for (const [index, usecase] of usecases.entries()) {
        const homeRegion = regions[index % regions.length];
        const response = await stack.request('POST', `/v4/platform/tenants/${acmeId}/children`, {
          as: ADMIN,
          body: { name: `Acme ${usecase}`, slug: slug(`acme-${usecase}`), usecase, homeRegion },
        });
        expect(response.status, JSON.stringify(response.body)).toBe(201);
        expect(response.body).toMatchObject({ usecase, homeRegion, parentId: acmeId });
      }
      const bad = await stack.request('POST', `/v4/platform/tenants/${acmeId}/children`, { as: ADMIN, body: { name: 'Bad', slug: slug('bad'), homeRegion: 'mars' } });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details.field).toBe('home_region');
    });

    it('lets only an administrator of the parent create children: members and other tenants get 403', async () => {
      const body = { name: 'Nope', slug: slug('nope') };
      for (const [as, parent] of [
        [MEMBER, acmeId],
        [GLOBEX_ADMIN, acmeId],
        [ADMIN, globexId],
        [PLATFORM_ADMIN, acmeId],
      ] as const) {
        const refused = await stack.request('POST', `/v4/platform/tenants/${parent}/children`, { as, body });
        expect(refused.status, `${as} under ${parent}`).toBe(403);
        expect(refused.body.error.code).toBe('FORBIDDEN');
      }
      expect(await sql`select 1 from tenants where slug = ${slug('nope')}`).toHaveLength(0);
    });

    it('bootstraps the caller as tenant-admin of a new child, which becomes usable once provisioned', async () => {
      const created = await stack.request('POST', `/v4/platform/tenants/${acmeId}/children`, { as: ADMIN, body: { name: 'Acme Labs', slug: slug('acme-labs') } });
      expect(created.status).toBe(201);
      const childId = created.body.id;
      const before = await stack.request('GET', '/v4/identity/tenants', { as: ADMIN });
      expect(before.body.data.map((t: any) => t.id)).not.toContain(childId);

      const bootstrap = await stack.request('POST', `/v4/platform/tenants/${acmeId}/children/${childId}/bootstrap-admin`, { as: ADMIN });
      expect(bootstrap.status, JSON.stringify(bootstrap.body)).toBe(201);
      expect(bootstrap.body).toMatchObject({ tenantId: childId, userId: userIds[ADMIN], roles: ['tenant-admin'], status: 'active' });
      const again = await stack.request('POST', `/v4/platform/tenants/${acmeId}/children/${childId}/bootstrap-admin`, { as: ADMIN });
      expect(again.status).toBe(200);
      expect(again.body.roles).toEqual(['tenant-admin']);

      const entry = await settled(ADMIN, childId);
      expect(entry).toMatchObject({ id: childId, status: 'active', parentId: acmeId, homeRegion: 'au', roles: ['tenant-admin'] });
      const project = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, headers: { 'x-tenant-id': childId }, body: { name: 'Lab project' } });
      expect(project.status).toBe(201);
      const listed = await resourcesIn(childId, ADMIN);
      expect(listed.body.data.map((r: any) => r.id)).toEqual([project.body.id]);
      const grandchild = await stack.request('POST', `/v4/platform/tenants/${childId}/children`, { as: ADMIN, body: { name: 'Lab annex', slug: slug('lab-annex') } });
      expect(grandchild.status).toBe(201);
      expect(grandchild.body).toMatchObject({ parentId: childId, homeRegion: 'au' });
    });

    it('refuses bootstrap-admin to members, to other tenants’ admins, and for a tenant that is not a child of the path’s parent', async () => {
      const child = await stack.request('POST', `/v4/platform/tenants/${acmeId}/children`, { as: ADMIN, body: { name: 'Acme Vault', slug: slug('acme-vault') } });
      const childId = child.body.id;
      expect((await stack.request('POST', `/v4/platform/tenants/${acmeId}/children/${childId}/bootstrap-admin`, { as: MEMBER })).status).toBe(403);
      expect((await stack.request('POST', `/v4/platform/tenants/${acmeId}/children/${childId}/bootstrap-admin`, { as: GLOBEX_ADMIN })).status).toBe(403);
      const viaOwnParent = await stack.request('POST', `/v4/platform/tenants/${globexId}/children/${childId}/bootstrap-admin`, { as: GLOBEX_ADMIN });
      expect(viaOwnParent.status).toBe(404);
      expect(viaOwnParent.body.error.code).toBe('NOT_FOUND');
      expect((await stack.request('POST', `/v4/platform/tenants/${acmeId}/children/${globexId}/bootstrap-admin`, { as: ADMIN })).status).toBe(404);
      expect(await sql`select 1 from memberships where tenant_id = ${childId}::uuid`).toHaveLength(0);
    });
  });

  describe('users and memberships', () => {
    it('looks users up by e-mail for tenant administrators and the platform, not for members', async () => {
      const found = await stack.request('GET', `/v4/platform/users/by-email?email=${encodeURIComponent('MEMBER@acme.test')}`, { as: ADMIN });
      expect(found.status).toBe(200);
      expect(Object.keys(found.body).sort()).toEqual(['createdAt', 'email', 'id', 'lastLoginAt', 'name', 'status']);
      expect(found.body).toMatchObject({ id: userIds[MEMBER], email: MEMBER, name: 'Acme Member', status: 'active' });
      const byPlatform = await stack.request('GET', `/v4/platform/users/by-email?email=${MEMBER}`, { as: PLATFORM_ADMIN });
      expect(Object.keys(byPlatform.body).sort()).toEqual(['createdAt', 'email', 'id', 'lastLoginAt', 'name', 'status']);
      // Another tenant's administrator learns who the user is, not when they sign in.
      const byOther = await stack.request('GET', `/v4/platform/users/by-email?email=${MEMBER}`, { as: GLOBEX_ADMIN });
      expect(byOther.status).toBe(200);
      expect(byOther.body).toEqual({ id: userIds[MEMBER], email: MEMBER, name: 'Acme Member', status: 'active' });
      expect((await stack.request('GET', `/v4/platform/users/by-email?email=${ADMIN}`, { as: MEMBER })).status).toBe(403);
      const unknown = await stack.request('GET', `/v4/platform/users/by-email?email=nobody-${run}@acme.test`, { as: ADMIN });
      expect(unknown.status).toBe(404);
      const invalid = await stack.request('GET', '/v4/platform/users/by-email?email=not-an-address', { as: ADMIN });
      expect(invalid.status).toBe(400);
      expect(invalid.body.error.details.field).toBe('email');
      expect((await stack.request('GET', '/v4/platform/users/by-email', { as: ADMIN })).status).toBe(400);
    });

    it('shows memberships only in tenants the caller administers, all of them to the user and the platform', async () => {
      const own = await stack.request('GET', `/v4/platform/users/${userIds[MEMBER]}/memberships`, { as: MEMBER });
      expect(own.status).toBe(200);
      expect(own.body.data.find((m: any) => m.slug === 'acme')).toMatchObject({ id: acmeId, roles: ['member'], status: 'active' });

      const byAdmin = await stack.request('GET', `/v4/platform/users/${userIds[MEMBER]}/memberships`, { as: ADMIN });
      expect(byAdmin.body.data.map((m: any) => m.slug)).toContain('acme');
      const acrossTenants = await stack.request('GET', `/v4/platform/users/${userIds[ADMIN]}/memberships`, { as: GLOBEX_ADMIN });
      expect(acrossTenants.status).toBe(200);
      expect(acrossTenants.body.data).toEqual([]);
      const byPlatform = await stack.request('GET', `/v4/platform/users/${userIds[ADMIN]}/memberships`, { as: PLATFORM_ADMIN });
      expect(byPlatform.body.data.map((m: any) => m.slug)).toContain('acme');

      expect((await stack.request('GET', `/v4/platform/users/${userIds[ADMIN]}/memberships`, { as: MEMBER })).status).toBe(403);
      expect((await stack.request('GET', `/v4/platform/users/${randomUUID()}/memberships`, { as: ADMIN })).status).toBe(404);
    });

    it('lets a tenant-admin invite an existing user as member, who joins on accepting; members and other tenants get 403', async () => {
      const child = await usableChild(ADMIN, acmeId, 'acme-guests');
      const path = `/v4/platform/tenants/${child.id}/users/${userIds[GLOBEX_ADMIN]}/provision`;
      expect((await stack.request('POST', path, { as: GLOBEX_ADMIN })).status).toBe(403);
      expect((await stack.request('POST', `/v4/platform/tenants/${acmeId}/users/${userIds[GLOBEX_ADMIN]}/provision`, { as: MEMBER })).status).toBe(403);
      expect((await stack.request('POST', `/v4/platform/tenants/${acmeId}/users/${userIds[GLOBEX_ADMIN]}/provision`, { as: GLOBEX_ADMIN })).status).toBe(403);
      expect((await resourcesIn(child.id, GLOBEX_ADMIN)).status).toBe(403);

      const added = await stack.request('POST', path, { as: ADMIN });
      expect(added.status, JSON.stringify(added.body)).toBe(201);
      expect(added.body).toMatchObject({ tenantId: child.id, userId: userIds[GLOBEX_ADMIN], roles: ['member'], status: 'invited' });
      expect((await stack.request('POST', path, { as: ADMIN })).status).toBe(200);
      // An invitation is no membership: the user is in the tenant once they accept it.
      expect((await resourcesIn(child.id, GLOBEX_ADMIN)).status).toBe(403);
      expect((await stack.request('GET', '/v4/identity/tenants', { as: GLOBEX_ADMIN })).body.data.map((t: any) => t.id)).not.toContain(child.id);
      const accepted = await stack.request('POST', '/v4/identity/me/provision', { as: GLOBEX_ADMIN, body: { tenant_id: child.id } });
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
      expect(accepted.body).toMatchObject({ tenantId: child.id, userId: userIds[GLOBEX_ADMIN], roles: ['member'], status: 'active' });
      expect((await stack.request('POST', path, { as: ADMIN })).status).toBe(200);
      expect((await resourcesIn(child.id, GLOBEX_ADMIN)).status).toBe(200);
      const tenants = await stack.request('GET', '/v4/identity/tenants', { as: GLOBEX_ADMIN });
      expect(tenants.body.data.find((t: any) => t.id === child.id)).toMatchObject({ roles: ['member'], status: 'active' });
      expect((await stack.request('POST', `/v4/platform/tenants/${child.id}/users/${randomUUID()}/provision`, { as: ADMIN })).status).toBe(404);
    });

    it('lets an invitation expire after 7 days: it cannot be accepted then, and inviting again renews it', async () => {
      const child = await usableChild(ADMIN, acmeId, 'acme-late');
      const path = `/v4/platform/tenants/${child.id}/users/${userIds[GLOBEX_ADMIN]}/provision`;
      const invited = await stack.request('POST', path, { as: ADMIN });
      expect(invited.status, JSON.stringify(invited.body)).toBe(201);
      const week = Date.parse(invited.body.expiresAt) - Date.now();
      expect(week).toBeGreaterThan(7 * 24 * 3600_000 - 60_000);
      expect(week).toBeLessThanOrEqual(7 * 24 * 3600_000);
      // Eight days pass.
      await sql`update memberships set invitation_expires_at = now() - interval '1 day' where tenant_id = ${child.id}::uuid and user_id = ${userIds[GLOBEX_ADMIN]!}::uuid`;
      const late = await stack.request('POST', '/v4/identity/me/provision', { as: GLOBEX_ADMIN, body: { tenant_id: child.id } });
      expect(late.status, JSON.stringify(late.body)).toBe(403);
      expect(late.body.error.message).toMatch(/invitation to tenant .* expired on \d{4}-\d\d-\d\d.*invite you again/);
      expect((await resourcesIn(child.id, GLOBEX_ADMIN)).status).toBe(403);
      const [row] = await sql<{ status: string }[]>`select status from memberships where tenant_id = ${child.id}::uuid and user_id = ${userIds[GLOBEX_ADMIN]!}::uuid`;
      expect(row?.status).toBe('invited');
      // The administrator invites again: the same invitation, for another 7 days, which the user accepts.
      const renewed = await stack.request('POST', path, { as: ADMIN });
      expect(renewed.status, JSON.stringify(renewed.body)).toBe(200);
      expect(renewed.body).toMatchObject({ status: 'invited' });
      expect(Date.parse(renewed.body.expiresAt)).toBeGreaterThan(Date.now() + 6 * 24 * 3600_000);
      const accepted = await stack.request('POST', '/v4/identity/me/provision', { as: GLOBEX_ADMIN, body: { tenant_id: child.id } });
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
      expect(accepted.body).toMatchObject({ status: 'active', expiresAt: null });
    });

    it('lets the user decline an invitation (POST /v4/identity/me/decline): it is gone and cannot be accepted', async () => {
      const child = await usableChild(ADMIN, acmeId, 'acme-declined');
      const path = `/v4/platform/tenants/${child.id}/users/${userIds[GLOBEX_ADMIN]}/provision`;
      expect((await stack.request('POST', path, { as: ADMIN })).status).toBe(201);
      // Only the invited user declines their own invitation; nobody else's is touched by it.
      expect((await stack.request('POST', '/v4/identity/me/decline', { as: MEMBER, body: { tenant_id: child.id } })).status).toBe(404);
      const declined = await stack.request('POST', '/v4/identity/me/decline', { as: GLOBEX_ADMIN, body: { tenant_id: child.id } });
      expect(declined.status, JSON.stringify(declined.body)).toBe(204);
      expect(await sql`select 1 from memberships where tenant_id = ${child.id}::uuid and user_id = ${userIds[GLOBEX_ADMIN]!}::uuid`).toHaveLength(0);
      const accept = await stack.request('POST', '/v4/identity/me/provision', { as: GLOBEX_ADMIN, body: { tenant_id: child.id } });
      expect(accept.status).toBe(403);
      expect((await resourcesIn(child.id, GLOBEX_ADMIN)).status).toBe(403);
      const again = await stack.request('POST', '/v4/identity/me/decline', { as: GLOBEX_ADMIN, body: { tenant_id: child.id } });
      expect(again.status).toBe(404);
      expect(again.body.error.message).toContain('invitation to tenant');
      // A membership is not an invitation: declining does not remove an active member.
      expect((await stack.request('POST', '/v4/identity/me/decline', { as: ADMIN, body: { tenant_id: child.id } })).status).toBe(404);
      expect((await resourcesIn(child.id, ADMIN)).status).toBe(200);
      // The administrator sees the invitation gone: inviting again makes a new one.
      expect((await stack.request('POST', path, { as: ADMIN })).status).toBe(201);
      // The administrator withdraws it with the member-removal route.
      expect((await stack.request('DELETE', `/v4/platform/tenants/${child.id}/users/${userIds[GLOBEX_ADMIN]}`, { as: ADMIN })).status).toBe(204);
      expect((await stack.request('POST', '/v4/identity/me/provision', { as: GLOBEX_ADMIN, body: { tenant_id: child.id } })).status).toBe(403);
    });
  });

  describe('soft delete', () => {
    it('makes the tenant unusable for its members and hides it, while its rows stay', async () => {
      const child = await usableChild(ADMIN, acmeId, 'acme-doomed');
      expect((await stack.request('POST', `/v4/platform/tenants/${child.id}/users/${userIds[MEMBER]}/provision`, { as: ADMIN })).status).toBe(201);
      expect((await stack.request('POST', '/v4/identity/me/provision', { as: MEMBER, body: { tenant_id: child.id } })).status).toBe(201);
      expect((await resourcesIn(child.id, MEMBER)).status).toBe(200);
      const project = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, headers: { 'x-tenant-id': child.id }, body: { name: 'Doomed' } });
      expect(project.status).toBe(201);

      expect((await stack.request('POST', `/v4/platform/tenants/${child.id}/delete`, { as: MEMBER })).status).toBe(403);
      expect((await stack.request('POST', `/v4/platform/tenants/${child.id}/delete`, { as: GLOBEX_ADMIN })).status).toBe(403);
      const deleted = await stack.request('POST', `/v4/platform/tenants/${child.id}/delete`, { as: ADMIN });
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(204);
      expect(deleted.body).toBeUndefined();

      for (const as of [ADMIN, MEMBER]) {
        const refused = await resourcesIn(child.id, as);
        expect(refused.status).toBe(403);
        expect(refused.body.error.code).toBe('FORBIDDEN');
        const listed = await stack.request('GET', '/v4/identity/tenants', { as });
        expect(listed.body.data.map((t: any) => t.id)).not.toContain(child.id);
      }
      expect((await stack.request('POST', `/v4/platform/tenants/${child.id}/children`, { as: ADMIN, body: { name: 'Ghost', slug: slug('ghost') } })).status).toBe(403);
      expect((await stack.request('POST', `/v4/platform/tenants/${child.id}/delete`, { as: ADMIN })).status).toBe(403);
      expect((await stack.request('POST', `/v4/platform/tenants/${child.id}/delete`, { as: PLATFORM_ADMIN })).status).toBe(404);

      const [row] = await sql<{ status: string; deletedAt: Date | null }[]>`select status, deleted_at as "deletedAt" from tenants where id = ${child.id}::uuid`;
      expect(row!.status).toBe('deleted');
      expect(row!.deletedAt).toBeInstanceOf(Date);
      expect(await sql`select 1 from memberships where tenant_id = ${child.id}::uuid`).toHaveLength(2);
      expect(await sql`select 1 from resources where id = ${project.body.id}::uuid`).toHaveLength(1);
      const reuse = await stack.request('POST', `/v4/platform/tenants/${acmeId}/children`, { as: ADMIN, body: { name: 'Reuse', slug: slug('acme-doomed') } });
      expect(reuse.status).toBe(409);
    });

    it('refuses to delete a tenant that has live children (409), until they are deleted', async () => {
      const parent = await usableChild(ADMIN, acmeId, 'acme-holding');
      const child = await usableChild(ADMIN, parent.id, 'acme-holding-sub');
      const refused = await stack.request('POST', `/v4/platform/tenants/${parent.id}/delete`, { as: ADMIN });
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('CONFLICT');
      expect((await stack.request('POST', `/v4/platform/tenants/${child.id}/delete`, { as: ADMIN })).status).toBe(204);
      expect((await stack.request('POST', `/v4/platform/tenants/${parent.id}/delete`, { as: ADMIN })).status).toBe(204);
    });
  });
});
