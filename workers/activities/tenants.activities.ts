import type { OrchestrateJobs, TenantJobs } from '../../control-plane/contracts.ts';

/** Tenant provisioning steps, as activities over the tenants and orchestrate services; each is idempotent. */
export function createTenantsActivities(deps: {
  tenants: TenantJobs;
  orchestrate: Pick<OrchestrateJobs, 'ensureExampleWorkflows'>;
}) {
  const { tenants, orchestrate } = deps;
  return {
    ensureDefaultRoles: tenants.ensureDefaultRoles,
    ensureExampleWorkflows: orchestrate.ensureExampleWorkflows,
    activateTenant: tenants.activate,
    failTenantProvisioning: tenants.failProvisioning,
  };
}
