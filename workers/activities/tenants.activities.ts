import type { Services } from '../../control-plane/contracts.ts';

/** Tenant provisioning steps, as activities over the tenants and orchestrate services; each is idempotent. */
export function createTenantsActivities(deps: { services: Services }) {
  const { tenants, orchestrate } = deps.services;
  return {
    ensureDefaultRoles: tenants.ensureDefaultRoles,
    ensureExampleWorkflows: orchestrate.ensureExampleWorkflows,
    activateTenant: tenants.activate,
    failTenantProvisioning: tenants.failProvisioning,
  };
}
