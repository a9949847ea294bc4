import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { insertActiveTenant } from '../../test/harness/tenant-fixture.ts';
import { createDb, type Db } from '../db/client.ts';
import { systemActor } from '../identity/system-actor.ts';
import { tenantPlanSetter } from '../tenants/tenant-ports.ts';
import { createCapabilitiesService } from './capabilities.service.ts';

/** The plan of a tenant none was set for: its starter template's, else the platform's default (the operator's `DEFAULT_PLAN`). */
describe('the default plan', () => {
  let db: Db;
  let tenantId: string;
  const decide = (defaultPlan?: 'free' | 'team' | 'enterprise') =>
    createCapabilitiesService({ db, defaultPlan, setTenantPlan: tenantPlanSetter(db) }).evaluate(systemActor(tenantId), { capabilities: ['ai.chat', 'geo', 'realtime', 'webhooks', 'documents.ocr', 'documents.upload'], context: {} });

  beforeAll(async () => {
    db = createDb(inject('databaseUrl'), { tenantDatabaseUrl: inject('tenantDatabaseUrl') });
    tenantId = await insertActiveTenant(db.sql, `default-plan-${randomUUID().slice(0, 8)}`);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('includes everything the API describes unless the operator names another', async () => {
    const evaluation = await decide();
    expect(evaluation.plan).toBe('enterprise');
    expect(Object.values(evaluation.decisions).map((decision) => decision.allowed)).toEqual([true, true, true, true, true, true]);
    expect(evaluation.decisions['documents.upload']!.limits).toEqual({ maxFileBytes: 100 * 1024 * 1024 });
  });

  it("is the operator's when given, and a plan set for the tenant wins over it", async () => {
    const restricted = await decide('free');
    expect(restricted.plan).toBe('free');
    expect(restricted.decisions['ai.chat']).toEqual({ allowed: false, reason: 'the free plan does not include ai.chat', limits: {} });
    expect(restricted.decisions['documents.upload']!.limits).toEqual({ maxFileBytes: 10 * 1024 * 1024 });

    await createCapabilitiesService({ db, setTenantPlan: tenantPlanSetter(db) }).setPlan(tenantId, 'team');
    expect((await decide('free')).plan).toBe('team');
  });
});
