import { companyOf, reportApp, type AppRun } from '../app-run.ts';
import { condition, ConditionType, Reason } from '../conditions.ts';
import { requeueAfter, type Step } from '../runtime/step-runner.ts';

/** A fallback: the operator hears of tenant status changes at once through the tenants service. */
const PROVISIONING_POLL_MS = 5_000;

/**
 * Sums the enrolled app up by its child tenant: `Failed` when the child failed (ProvisionFailed),
 * `Provisioning` while it is provisioned (looked at again when its status changes), else `Ready`
 * (Enrolled).
 */
export const reportAppPhase: Step<AppRun> = {
  name: 'ReportAppPhase',
  async run(run) {
    const { object, key, enrolled } = run;
    if (!enrolled) throw new Error('the app is not enrolled yet: EnrollApp runs before this step');
    const generation = object.metadata.generation;
    const { child } = enrolled;
    if (child?.status === 'failed') {
      const message = `child tenant "${child.slug}" failed: ${child.statusReason ?? 'provisioning failed'}`;
      reportApp(run, 'Failed', condition(ConditionType.Ready, 'False', Reason.ProvisionFailed, message, generation));
      return 'stop';
    }
    if (child && child.status !== 'active') {
      reportApp(run, 'Provisioning', condition(ConditionType.Ready, 'False', Reason.ChildTenantProvisioning, `child tenant "${child.slug}" is ${child.status}`, generation));
      return requeueAfter(PROVISIONING_POLL_MS, { untilNotified: true });
    }
    reportApp(run, 'Ready', condition(ConditionType.Ready, 'True', Reason.Enrolled, `app ${key} is enrolled in ${companyOf(run).slug}`, generation));
    return 'continue';
  },
};
