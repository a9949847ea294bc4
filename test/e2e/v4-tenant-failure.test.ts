import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/stack/process.ts';
import { startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const PLATFORM_ADMIN = 'platform@svc.test';
const ADMIN = 'admin@acme.test';

/** A tenant whose provisioning fails ends `failed` with the reason, and is not usable. */
describe('tenant provisioning failure', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack();
    // A file where the blob store keeps tenant areas: every tenant's blob provisioning fails.
    await writeFile(join(stack.blobRoot, 'tenants'), 'not a directory');
  });
  afterAll(() => stack?.close());

  it('goes provisioning -> failed with a reason, and its admin cannot use it', async () => {
    const slug = `fails-${randomUUID().slice(0, 8)}`;
    const created = await stack.request('POST', '/v4/platform/tenants', { as: PLATFORM_ADMIN, body: { name: 'Doomed', slug, homeRegion: 'ca' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.status).toBe('provisioning');

    const tenants = () => stack.request('GET', '/v4/identity/tenants', { as: PLATFORM_ADMIN });
    const listed = await until(tenants, (r) => r.body.data.find((t: any) => t.slug === slug)?.status !== 'provisioning', 100_000);
    const tenant = listed.body.data.find((t: any) => t.slug === slug);
    expect(tenant.status).toBe('failed');
    expect(tenant.statusReason).toMatch(/blob/);

    const use = await stack.request('GET', `${V3}/resources?type=project`, { as: PLATFORM_ADMIN, headers: { 'x-tenant-id': tenant.id } });
    expect(use.status).toBe(403);
  }, 150_000);

  it('deletes a provisioning tenant while the workflow engine cannot be reached: 204, and the tenant is deleted', async () => {
    // No worker polls this stack's task queue, so its tenants stay provisioning.
    const waiting = await startTestStack({ worker: false });
    const outage = await startTestStack({ worker: false, temporal: { address: `127.0.0.1:${await freePort()}`, namespace: 'default' } });
    try {
      const slug = `waits-${randomUUID().slice(0, 8)}`;
      const created = await waiting.request('POST', '/v4/platform/tenants', { as: PLATFORM_ADMIN, body: { name: 'Waiting', slug, homeRegion: 'ca' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.status).toBe('provisioning');
      const deleted = await outage.request('POST', `/v4/platform/tenants/${created.body.id}/delete`, { as: PLATFORM_ADMIN });
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(204);
      const listed = await waiting.request('GET', '/v4/identity/tenants', { as: PLATFORM_ADMIN });
      expect(listed.body.data.map((t: any) => t.slug)).not.toContain(slug);

      // An administrator of a child whose provisioning has not run may delete it.
      const acme = (await waiting.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: any) => t.slug === 'acme');
      const child = await waiting.request('POST', `/v4/platform/tenants/${acme.id}/children`, { as: ADMIN, body: { name: 'Waiting child', slug: `${slug}-child` } });
      expect(child.status, JSON.stringify(child.body)).toBe(201);
      expect(child.body.status).toBe('provisioning');
      const bootstrapped = await waiting.request('POST', `/v4/platform/tenants/${acme.id}/children/${child.body.id}/bootstrap-admin`, { as: ADMIN });
      expect(bootstrapped.status, JSON.stringify(bootstrapped.body)).toBe(201);
      const removed = await waiting.request('POST', `/v4/platform/tenants/${child.body.id}/delete`, { as: ADMIN });
      expect(removed.status, JSON.stringify(removed.body)).toBe(204);
    } finally {
      await outage.close();
      await waiting.close();
    }
  }, 60_000);
});
