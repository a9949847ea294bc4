import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const PLATFORM_ADMIN = 'platform@svc.test';

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
});
