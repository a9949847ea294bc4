import type { OrchestrateService, TenantsService } from '../../control-plane/contracts.ts';

/** Tenant provisioning steps, as activities over the tenants and orchestrate services; each is idempotent. */
export function createTenantsActivities(deps: {
  tenants: Pick<TenantsService, 'ensureDefaultRoles' | 'activate' | 'failProvisioning'>;
  orchestrate: Pick<OrchestrateService, 'ensureExampleWorkflows'>;
}) {
  const { tenants, orchestrate } = deps;
  return {
    ensureDefaultRoles: tenants.ensureDefaultRoles,
    ensureExampleWorkflows: orchestrate.ensureExampleWorkflows,
    activateTenant: tenants.activate,
    failTenantProvisioning: tenants.failProvisioning,
  };
}
