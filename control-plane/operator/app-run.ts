import type { AppsDeclared } from '../apps/apps.declared.ts';
import type { Tenant } from '../tenants/tenants.schema.ts';
import type { TenantsDeclared } from '../tenants/tenants.declared.ts';
import type { AppObject } from './app-object.ts';
import { condition, ConditionType, Reason, type Condition } from './conditions.ts';
import type { Kube } from './kube.ts';
import type { RecordEvent } from './runtime/event-recorder.ts';
import type { StepRun } from './runtime/step-runner.ts';

/** What reconciling App objects needs of the platform. */
export interface ReconcileAppDeps {
  apps: Pick<AppsDeclared, 'declare' | 'removeDeclared'>;
  tenants: Pick<TenantsDeclared, 'find'>;
  event: RecordEvent;
}

/** What the steps of one reconcile of an App object share. */
export interface AppRun extends StepRun<AppObject> {
  deps: ReconcileAppDeps;
  /** The Kubernetes API, through the controller's echo suppression and cache. */
  kube: Kube;
  /** The app's key (see `keyOf`); '' when none can be made. */
  key: string;
  /** The company tenant, once `FindCompanyTenant` found it active. */
  company?: Tenant;
  /** The enrolled app and its child tenant, once `EnrollApp` has run. */
  enrolled?: { app: { id: string }; child?: Tenant };
}

export type AppPhase = 'Pending' | 'Provisioning' | 'Ready' | 'Failed';

/**
 * How an App reconcile ends: phase, key, observedGeneration, the Ready condition given, Degraded
 * (True with Ready's reason when Failed), and an Event when the phase changes.
 */
export function reportApp(run: AppRun, phase: AppPhase, ready: Omit<Condition, 'lastTransitionTime'>): void {
  const { object, status, key } = run;
  const failed = phase === 'Failed';
  const generation = object.metadata.generation;
  status.set({ phase, observedGeneration: generation, ...(key ? { key } : {}) });
  status.condition(ready);
  status.condition(
    failed
      ? condition(ConditionType.Degraded, 'True', ready.reason, ready.message, generation)
      : condition(ConditionType.Degraded, 'False', Reason.AsExpected, 'no failures', generation),
  );
  if (object.status?.phase !== phase) {
    if (phase === 'Ready') status.event('Normal', Reason.Enrolled, ready.message);
    else status.event(failed ? 'Warning' : 'Normal', ready.reason, ready.message);
  }
}

/** The company tenant a step after `FindCompanyTenant` works with. */
export function companyOf(run: AppRun): Tenant {
  if (!run.company) throw new Error('the company tenant is not found yet: FindCompanyTenant runs before this step');
  return run.company;
}
