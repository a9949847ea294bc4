import { reportApp, type AppRun } from '../app-run.ts';
import { condition, ConditionType, Reason } from '../conditions.ts';
import { requeueAfter, type Step } from '../runtime/step-runner.ts';

/** Fallbacks: the operator hears of tenant status changes at once through the tenants service. */
const PROVISIONING_POLL_MS = 5_000;
const WAITING_POLL_MS = 5_000;

/**
 * Waits for the App's company tenant to exist and be active: `Pending` meanwhile (reasons
 * CompanyTenantNotFound, WaitingForCompanyTenant), looked at again when its status changes (one
 * that does not exist yet is polled). Records its id in status once found. `CompanyTenantFound`
 * says which, with the same reasons.
 */
export const findCompanyTenant: Step<AppRun> = {
  name: 'FindCompanyTenant',
  async run(run) {
    const { object, deps } = run;
    const generation = object.metadata.generation;
    const company = await deps.tenants.find(object.spec.companyTenant);
    if (!company) {
      const message = `company tenant "${object.spec.companyTenant}" does not exist`;
      run.status.condition(condition(ConditionType.CompanyTenantFound, 'False', Reason.CompanyTenantNotFound, message, generation));
      reportApp(run, 'Pending', condition(ConditionType.Ready, 'False', Reason.CompanyTenantNotFound, message, generation));
      return requeueAfter(WAITING_POLL_MS);
    }
    if (company.status !== 'active') {
      const message = `company tenant "${company.slug}" is ${company.status}`;
      run.status.condition(condition(ConditionType.CompanyTenantFound, 'False', Reason.WaitingForCompanyTenant, message, generation));
      reportApp(run, 'Pending', condition(ConditionType.Ready, 'False', Reason.WaitingForCompanyTenant, message, generation));
      return requeueAfter(PROVISIONING_POLL_MS, { untilNotified: true });
    }
    run.company = company;
    run.status.set({ companyTenantId: company.id });
    run.status.condition(condition(ConditionType.CompanyTenantFound, 'True', Reason.CompanyTenantActive, `company tenant "${company.slug}" (${company.id}) is active`, generation));
    return 'continue';
  },
};
