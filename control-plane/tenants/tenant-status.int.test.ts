import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { until } from '../../test/harness/until.ts';
import { createDb, type Db } from '../db/client.ts';
import { createIdentityService } from '../identity/identity.service.ts';
import { insertTenant } from './tenants.repo.ts';
import { createTenantsService, type TenantsService } from './tenants.service.ts';

/** The operator learns of tenant status changes from the database, at commit, not by polling. */
describe('tenant status notifications', () => {
  let db: Db;
  let tenants: TenantsService;
  beforeAll(() => {
    db = createDb(inject('databaseUrl'));
    tenants = createTenantsService({ db, identity: createIdentityService({ db }) });
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
});
