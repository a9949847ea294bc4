import { reportApp, type AppRun } from '../app-run.ts';
import { condition, ConditionType, Reason } from '../conditions.ts';
import { requeueAfter, type Step } from '../runtime/step-runner.ts';

/** Fallbacks: the operator hears of tenant status changes at once through the tenants service. */
const PROVISIONING_POLL_MS = 5_000;
const WAITING_POLL_MS = 5_000;

/**
 * Waits for the App's company tenant to exist and be active: `Pending` meanwhile (reasons
 * CompanyTenantNotFound, WaitingForCompanyTenant), looked at again when its status changes (one
 * that does not exist yet is polled). Records its id in status once found.
 */
export const findCompanyTenant: Step<AppRun> = {
  name: 'FindCompanyTenant',
  async run(run) {
    const { object, deps } = run;
    const generation = object.metadata.generation;
    const company = await deps.tenants.find(object.spec.companyTenant);
    if (!company) {
      reportApp(run, 'Pending', condition(ConditionType.Ready, 'False', Reason.CompanyTenantNotFound, `company tenant "${object.spec.companyTenant}" does not exist`, generation));
      return requeueAfter(WAITING_POLL_MS);
    }
    if (company.status !== 'active') {
      reportApp(run, 'Pending', condition(ConditionType.Ready, 'False', Reason.WaitingForCompanyTenant, `company tenant "${company.slug}" is ${company.status}`, generation));
      return requeueAfter(PROVISIONING_POLL_MS, { untilNotified: true });
    }
    run.company = company;
    run.status.set({ companyTenantId: company.id });
    return 'continue';
  },
};
