import { childSlugOf, type AppObject } from './app-object.ts';
import type { AppRun, ReconcileAppDeps } from './app-run.ts';
import { APP_FINALIZER, APPS, GROUP, VERSION, type Kube } from './kube.ts';
import type { ControlledKind } from './runtime/kind.ts';
import { reconcileBySteps } from './runtime/reconcile-by-steps.ts';
import type { StatusDraft } from './runtime/status-draft.ts';
import type { Step } from './runtime/step-runner.ts';
import { checkAppKey, keyOf } from './steps/check-app-key.ts';
import { checkChildSlug } from './steps/check-child-slug.ts';
import { enrollApp } from './steps/enroll-app.ts';
import { findCompanyTenant } from './steps/find-company-tenant.ts';
import { markDeleting } from './steps/mark-deleting.ts';
import { removeEnrollment } from './steps/remove-enrollment.ts';
import { reportAppPhase } from './steps/report-app-phase.ts';

export type { ReconcileAppDeps } from './app-run.ts';

/**
 * Brings one App object to its declared state, in order (after the controller's finalizer): its
 * key; the company tenant, which must exist and be active (waited for otherwise); its child
 * tenant's slug; the enrollment and its child tenant, declared through the same apps service as
 * v4; then the phase, by the child tenant's state. Every step is idempotent.
 */
export const reconcileAppSteps: readonly Step<AppRun>[] = [checkAppKey, findCompanyTenant, checkChildSlug, enrollApp, reportAppPhase];

/** Cleans up after a deleted App object: its enrollment and child tenant go before the finalizer. */
export const finalizeAppSteps: readonly Step<AppRun>[] = [
  markDeleting<AppRun>(({ object, key }) => `removing app ${key || object.metadata.name} from ${object.spec.companyTenant}`),
  removeEnrollment,
];

/** The App kind as the controller runs it. */
export function appKind(deps: ReconcileAppDeps): ControlledKind<AppObject> {
  const resource = { group: GROUP, version: VERSION, plural: APPS };
  const start = (object: AppObject, kube: Kube, status: StatusDraft): AppRun => ({ object, status, kube, deps, key: keyOf(object).key });
  return {
    kind: 'App',
    ...resource,
    finalizer: APP_FINALIZER,
    reconcile: reconcileBySteps(resource, reconcileAppSteps, start, deps.event),
    finalize: reconcileBySteps(resource, finalizeAppSteps, start, deps.event),
    follows: ({ spec }) => [spec.companyTenant, childSlugOf(spec)].filter((slug): slug is string => !!slug),
  };
}
