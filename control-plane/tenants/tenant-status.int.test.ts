import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { until } from '../../test/harness/until.ts';
import { createDb, type Db } from '../db/client.ts';
import { createIdentityService } from '../identity/identity.service.ts';
import { insertTenant } from './tenants.repo.ts';
import { createTenantsDeclared, type TenantsDeclared } from './tenants.declared.ts';
import { createTenantJobs, type TenantJobs } from './tenants.jobs.ts';

/** The operator learns of tenant status changes from the database, at commit, not by polling. */
describe('tenant status notifications', () => {
  let db: Db;
  let tenants: TenantsDeclared & TenantJobs;
  // Its own application name, so that the test can find its listening connection among the suite's.
  const application = `tenant-status-test-${randomUUID().slice(0, 8)}`;
  beforeAll(() => {
    const url = new URL(inject('databaseUrl'));
    url.searchParams.set('application_name', application);
    db = createDb(url.toString());
    const deps = { db, identity: createIdentityService({ db }) };
    tenants = { ...createTenantsDeclared(deps), ...createTenantJobs(deps) };
  });
  afterAll(() => db.close());

  it('announces activation, failure and soft deletion with the slug, and nothing else', async () => {
    const heard: string[] = [];
    const subscription = await tenants.onStatusChange((slug) => heard.push(slug));
    try {
      const slug = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;
      const [active, failed] = [slug('notify-active'), slug('notify-failed')];
      const insert = (s: string) =>
        db.system((tx) => insertTenant(tx, { slug: s, name: s, domains: [], usecase: 'generic', starterTemplate: 'blank-vertical-template', homeRegion: 'eu', parentId: null }));
      const a = await insert(active);
      const f = await insert(failed);
      await tenants.activate(a.id);
      await tenants.failProvisioning({ tenantId: f.id, reason: 'storage said no' });
      await tenants.activate(a.id); // already active: no change, no announcement
      await tenants.removeDeclared(active);
      await until(async () => heard.filter((s) => s === active || s === failed), (mine) => mine.length >= 3);
      expect(heard.filter((s) => s === active || s === failed)).toEqual([active, failed, active]);
    } finally {
      await subscription.stop();
    }
  });

  it('listens again after its connection is lost, and tells the caller, who may have missed announcements meanwhile', async () => {
    const heard: string[] = [];
    let resumed = 0;
    const subscription = await tenants.onStatusChange((slug) => heard.push(slug), () => resumed++);
    try {
      expect(resumed).toBe(0);
      const killed = await db.sql<{ killed: boolean }[]>`
        select pg_terminate_backend(pid) as killed from pg_stat_activity
        where application_name = ${application} and pid <> pg_backend_pid() and query ilike 'listen %tenant_status%'`;
      expect(killed.map((k) => k.killed)).toEqual([true]);
      await until(async () => resumed, (count) => count === 1);
      const s = `notify-resumed-${randomUUID().slice(0, 8)}`;
      const tenant = await db.system((tx) => insertTenant(tx, { slug: s, name: s, domains: [], usecase: 'generic', starterTemplate: 'blank-vertical-template', homeRegion: 'eu', parentId: null }));
      await tenants.activate(tenant.id);
      await until(async () => heard, (slugs) => slugs.includes(s));
    } finally {
      await subscription.stop();
    }
  });
});
