import { DeclaredElsewhereError } from '../../errors.ts';
import { namedBackends } from '../../storage/storage.schema.ts';
import { PROVISION_TENANT } from '../../temporal/workflow-contract.ts';
import { condition, ConditionType, Reason } from '../conditions.ts';
import { requeueAfter, type Step } from '../runtime/step-runner.ts';
import type { TenantRun } from '../tenant-run.ts';
import { declareAs } from '../declare-as.ts';

/** How soon a refused declaration is tried again. */
const REFUSED_RETRY_MS = 10_000;

/**
 * Creates or updates the platform tenant the Tenant object declares, through the same tenants
 * service as v4 (whose provisioning workflow `tenant-<id>-provision` does the work); records its
 * id, home region and workflow id in status, with `TenantDeclared` True. Idempotent. Refused
 * (declared by another object, invalid, the workflow engine unreachable), the object is `Failed`
 * (TenantDeclared and Ready False, Degraded True) and looked at again in 10 s.
 */
export const declareTenant: Step<TenantRun> = {
  name: 'DeclareTenant',
  async run(run) {
    const { object, status } = run;
    const { spec } = object;
    const generation = object.metadata.generation;
    try {
      run.tenant = await declareAs(run.kube, object, (declaredBy) =>
        run.deps.tenants.declare({
          slug: spec.slug,
          name: spec.name.trim(),
          parent: spec.parent,
          domains: spec.domains ?? [],
          usecase: spec.usecase ?? 'generic',
          industry: spec.industry?.trim(),
          starterTemplate: spec.starterTemplate ?? 'blank-vertical-template',
          homeRegion: spec.homeRegion,
          storageBackends: namedBackends(spec.storageBackends),
          declaredBy,
        }),
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const reason = error instanceof DeclaredElsewhereError ? Reason.DeclaredElsewhere : Reason.ProvisionFailed;
      status.set({ phase: 'Failed', observedGeneration: generation });
      status.condition(condition(ConditionType.Ready, 'False', reason, message, generation));
      status.condition(condition(ConditionType.TenantDeclared, 'False', reason, message, generation));
      status.condition(condition(ConditionType.Degraded, 'True', reason, message, generation));
      if (object.status?.phase !== 'Failed') status.event('Warning', reason, message);
      return requeueAfter(REFUSED_RETRY_MS);
    }
    const { tenant } = run;
    status.set({ tenantId: tenant.id, homeRegion: tenant.homeRegion ?? undefined, provisioningWorkflowId: PROVISION_TENANT.workflowId(tenant.id) });
    status.condition(condition(ConditionType.TenantDeclared, 'True', Reason.Declared, `tenant ${tenant.slug} (${tenant.id})`, generation));
    return 'continue';
  },
};
