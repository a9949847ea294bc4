import { DeclaredElsewhereError } from '../../errors.ts';
import { childSlugOf } from '../app-object.ts';
import { companyOf, reportApp, type AppRun } from '../app-run.ts';
import { condition, ConditionType, Reason } from '../conditions.ts';
import { requeueAfter, type Step } from '../runtime/step-runner.ts';
import { declareAs } from '../declare-as.ts';

/** How soon a refused enrollment is tried again. */
const FAILED_RETRY_MS = 10_000;

/**
 * Enrolls the app in its company tenant, with its child tenant, through the same apps service as
 * v4 (the child is provisioned by the tenant workflow); records the app's and child's ids in
 * status, with `AppEnrolled` True. Idempotent. Refused (declared by another object, a parent
 * outside the company tenant), the App is `Failed` (AppEnrolled and Ready False: DeclaredElsewhere,
 * EnrollFailed) and looked at again in 10 s.
 */
export const enrollApp: Step<AppRun> = {
  name: 'EnrollApp',
  async run(run) {
    const { object, deps, key } = run;
    const { spec } = object;
    const company = companyOf(run);
    try {
      const { app, child } = await declareAs(run.kube, object, (declaredBy) =>
        deps.apps.declare({
          companyTenant: company.slug,
          key,
          name: spec.name.trim(),
          template: spec.template,
          source: spec.source ?? 'svc-cli',
          appUrl: spec.appUrl,
          status: spec.lifecycleStatus ?? 'pending',
          childTenant: spec.childTenant && { name: spec.childTenant.name.trim(), slug: childSlugOf(spec)! },
          parentTenant: spec.parentTenant,
          declaredBy,
        }),
      );
      run.enrolled = { app, child };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const reason = error instanceof DeclaredElsewhereError ? Reason.DeclaredElsewhere : Reason.EnrollFailed;
      run.status.condition(condition(ConditionType.AppEnrolled, 'False', reason, message, object.metadata.generation));
      reportApp(run, 'Failed', condition(ConditionType.Ready, 'False', reason, message, object.metadata.generation));
      return requeueAfter(FAILED_RETRY_MS);
    }
    const { app, child } = run.enrolled;
    run.status.set({ appId: app.id, ...(child ? { childTenantId: child.id } : {}) });
    const enrolled = `app ${key} (${app.id}) is enrolled in ${company.slug}${child ? ` with child tenant ${child.slug}` : ''}`;
    run.status.condition(condition(ConditionType.AppEnrolled, 'True', Reason.Enrolled, enrolled, object.metadata.generation));
    return 'continue';
  },
};
