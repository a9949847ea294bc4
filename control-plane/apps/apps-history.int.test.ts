import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../db/client.ts';
import { createDeclarationsService } from '../declarations/declarations.service.ts';
import { createIdentityService } from '../identity/identity.service.ts';
import { keyedResources } from '../resources/keyed-resources.ts';
import { selectVersions } from '../resources/resource-versions.repo.ts';
import { insertTenant } from '../tenants/tenants.repo.ts';
import { createTenantsDeclared } from '../tenants/tenants.declared.ts';
import { createTenantsService } from '../tenants/tenants.service.ts';
import { APP_OBJECT_TYPE } from './apps.schema.ts';
import { createAppsDeclared, type AppsDeclared } from './apps.declared.ts';

/** App enrollments are resources: every change to one, the operator's included, is in its history. */
describe('app enrollment history', () => {
  let db: Db;
  let apps: AppsDeclared;
  let companyId: string;
  const company = `apps-history-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    db = createDb(inject('databaseUrl'));
    const identity = createIdentityService({ db });
    const tenants = { ...createTenantsService({ db, identity }), ...createTenantsDeclared({ db, identity }) };
    apps = createAppsDeclared({ db, tenants, declarations: createDeclarationsService(), enrollments: keyedResources(APP_OBJECT_TYPE) });
    companyId = (
      await db.system((tx) => insertTenant(tx, { slug: company, name: company, domains: [], usecase: 'generic', starterTemplate: 'blank-vertical-template', homeRegion: 'eu', parentId: null }))
    ).id;
  });
  afterAll(() => db.close());

  it('records the create, each update that changes something and the delete, newest first', async () => {
    const declaration = { companyTenant: company, key: 'field-service', name: 'Field Service', source: 'operator', status: 'pending' as const };
    const { app } = await apps.declare(declaration);
    await apps.declare(declaration); // unchanged: no write, no entry
    await apps.declare({ ...declaration, status: 'active' });
    await apps.removeDeclared(company, 'field-service');
    const { rows, total } = await db.inTenant(companyId, (tx) => selectVersions(tx, APP_OBJECT_TYPE, app.id, 10, 0));
    expect(total).toBe(3);
    expect(rows.map((entry) => [entry.version, entry.operation, (entry.data as { status?: string }).status])).toEqual([
      [3, 'delete', 'active'],
      [2, 'update', 'active'],
      [1, 'create', 'pending'],
    ]);
  });
});
