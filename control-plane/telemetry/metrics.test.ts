import { describe, expect, it } from 'vitest';
import { clearTenantConditions, observeProcedure, recordTenantConditions, registry } from './metrics.ts';

const lines = async (name: string) => (await registry.metrics()).split('\n').filter((line) => line.startsWith(`${name}{`));

describe('metrics', () => {
  it('keeps one gauge per Tenant condition and status, and drops those the object no longer has', async () => {
    clearTenantConditions();
    recordTenantConditions('acme', [
      { type: 'Ready', status: 'False' },
      { type: 'StorageProvisioned', status: 'Unknown' },
    ]);
    expect(await lines('svc_operator_tenant_condition')).toEqual(
      expect.arrayContaining([
        'svc_operator_tenant_condition{name="acme",type="Ready",status="False"} 1',
        'svc_operator_tenant_condition{name="acme",type="Ready",status="True"} 0',
        'svc_operator_tenant_condition{name="acme",type="StorageProvisioned",status="Unknown"} 1',
      ]),
    );
    recordTenantConditions('acme', [{ type: 'Ready', status: 'True' }]);
    const after = await lines('svc_operator_tenant_condition');
    expect(after).toContain('svc_operator_tenant_condition{name="acme",type="Ready",status="True"} 1');
    expect(after.some((line) => line.includes('StorageProvisioned'))).toBe(false);
    recordTenantConditions('acme', undefined);
    expect(await lines('svc_operator_tenant_condition')).toEqual([]);
  });

  it('times procedures by path and outcome', async () => {
    observeProcedure('test.probe', 'NOT_FOUND', 0.002);
    observeProcedure('test.probe', 'NOT_FOUND', 0.004);
    expect(await lines('svc_trpc_procedure_duration_seconds_count')).toContain('svc_trpc_procedure_duration_seconds_count{procedure="test.probe",outcome="NOT_FOUND"} 2');
  });

  it('names every platform metric svc_*', async () => {
    const names = (await registry.getMetricsAsJSON()).map((metric) => metric.name);
    expect(names.length).toBeGreaterThan(10);
    expect(names.filter((name) => !name.startsWith('svc_'))).toEqual([]);
  });
});
