import { childSlugIssue, kebabCase } from '../apps/apps.schema.ts';
import type { AppsService } from '../apps/apps.service.ts';
import { DeclaredElsewhereError } from '../errors.ts';
import type { Tenant } from '../tenants/tenants.schema.ts';
import type { TenantsService } from '../tenants/tenants.service.ts';
import { childSlugOf, type AppObject } from './app-object.ts';
import { condition, ConditionType, deletingConditions, mergeConditions, Reason, type Condition } from './conditions.ts';
import type { CustomObject, StepResult } from './custom-object.ts';
import { APP_FINALIZER, APPS, type Kube } from './kube.ts';
import { patchStatus } from './status-patch.ts';
import { declareAs, declarerOf } from './steps/declare-as.ts';
import { ensureFinalizer, removeFinalizer } from './steps/ensure-finalizer.ts';

export interface ReconcileAppDeps {
  kube: Kube;
  apps: Pick<AppsService, 'declare' | 'removeDeclared'>;
  tenants: Pick<TenantsService, 'find'>;
  event(object: CustomObject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void>;
}

type Phase = 'Pending' | 'Provisioning' | 'Ready' | 'Failed';

const APP_FINALIZERS = { plural: APPS, finalizer: APP_FINALIZER };
/** Fallbacks: the operator hears of tenant status changes at once through the tenants service. */
const PROVISIONING_POLL_MS = 5_000;
const WAITING_POLL_MS = 5_000;
const FAILED_RETRY_MS = 10_000;

/**
 * The app's key: `spec.key`, else the one recorded in status at creation, else the kebab-case of
 * the name. Once recorded it never changes (the CRD forbids changing `spec.key`; a key added to
 * the spec later must equal the recorded one).
 */
function keyOf(object: AppObject): { key: string; problem?: { reason: string; message: string } } {
  const recorded = typeof object.status?.key === 'string' ? object.status.key : undefined;
  if (object.spec.key && recorded && object.spec.key !== recorded) {
    return { key: recorded, problem: { reason: Reason.KeyMismatch, message: `spec.key "${object.spec.key}" differs from the app's key "${recorded}", which cannot change` } };
  }
  const key = object.spec.key ?? recorded ?? kebabCase(object.spec.name);
  return key ? { key } : { key, problem: { reason: Reason.InvalidKey, message: 'the name has no letters or digits to make a key from; set spec.key' } };
}

/**
 * Brings one App object to its declared state, in order: the finalizer; the company tenant, which
 * must exist and be active (waited for otherwise); the enrollment and its child tenant, declared
 * through the same apps service as v4 (the child is provisioned by the tenant workflow); then
 * status (phase, key, ids, Ready / Degraded, observedGeneration) and Events on phase changes. A
 * deleted object removes its enrollment and soft-deletes its child tenant before the finalizer
 * goes. Every step is idempotent.
 */
export async function reconcileApp(deps: ReconcileAppDeps, object: AppObject): Promise<StepResult> {
  const { kube } = deps;
  const generation = object.metadata.generation;
  const { key, problem } = keyOf(object);

  const report = async (phase: Phase, ready: Omit<Condition, 'lastTransitionTime'>, fields: Record<string, unknown> = {}) => {
    const failed = phase === 'Failed';
    await patchStatus(kube, APPS, object, {
      phase,
      observedGeneration: generation,
      ...(key ? { key } : {}),
      ...fields,
      conditions: mergeConditions(
        object.status?.conditions,
        [
          ready,
          failed
            ? condition(ConditionType.Degraded, 'True', ready.reason, ready.message, generation)
            : condition(ConditionType.Degraded, 'False', Reason.AsExpected, 'no failures', generation),
        ],
        new Date().toISOString(),
      ),
    });
    if (object.status?.phase !== phase) {
      if (phase === 'Ready') await deps.event(object, 'Normal', Reason.Enrolled, ready.message);
      else await deps.event(object, failed ? 'Warning' : 'Normal', ready.reason, ready.message);
    }
  };

  if (object.metadata.deletionTimestamp) {
    const message = `removing app ${key || object.metadata.name} from ${object.spec.companyTenant}`;
    await patchStatus(kube, APPS, object, { phase: 'Deleting', conditions: deletingConditions(object.status?.conditions, message, generation, new Date().toISOString()) });
    if (key) await deps.apps.removeDeclared(object.spec.companyTenant, key, declarerOf(object));
    await deps.event(object, 'Normal', 'Deleted', `app ${key} removed from ${object.spec.companyTenant}`);
    await removeFinalizer(kube, APP_FINALIZERS, object);
    return undefined;
  }

  await ensureFinalizer(kube, APP_FINALIZERS, object);
  if (problem) {
    await report('Failed', condition(ConditionType.Ready, 'False', problem.reason, problem.message, generation));
    return undefined;
  }

  const company = await deps.tenants.find(object.spec.companyTenant);
  if (!company || company.status !== 'active') {
    const ready = !company
      ? condition(ConditionType.Ready, 'False', Reason.CompanyTenantNotFound, `company tenant "${object.spec.companyTenant}" does not exist`, generation)
      : condition(ConditionType.Ready, 'False', Reason.WaitingForCompanyTenant, `company tenant "${company.slug}" is ${company.status}`, generation);
    await report('Pending', ready);
    return company ? { requeueAfterMs: PROVISIONING_POLL_MS, untilNotified: true } : { requeueAfterMs: WAITING_POLL_MS };
  }

  const childSlug = childSlugOf(object.spec);
  const slugIssue = childSlug === undefined ? undefined : childSlugIssue(childSlug);
  if (slugIssue) {
    const message = `childTenant.slug ${slugIssue} (the name is "${object.spec.childTenant!.name}")`;
    await report('Failed', condition(ConditionType.Ready, 'False', Reason.InvalidChildSlug, message, generation), { companyTenantId: company.id });
    return undefined;
  }
  let declared: { app: { id: string }; company: Tenant; child?: Tenant };
  try {
    declared = await declareAs(kube, object, (declaredBy) =>
      deps.apps.declare({
        companyTenant: company.slug,
        key,
        name: object.spec.name.trim(),
        template: object.spec.template,
        source: object.spec.source ?? 'svc-cli',
        appUrl: object.spec.appUrl,
        status: object.spec.lifecycleStatus ?? 'pending',
        childTenant: object.spec.childTenant && { name: object.spec.childTenant.name.trim(), slug: childSlug! },
        parentTenant: object.spec.parentTenant,
        declaredBy,
      }),
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const reason = error instanceof DeclaredElsewhereError ? Reason.DeclaredElsewhere : Reason.EnrollFailed;
    await report('Failed', condition(ConditionType.Ready, 'False', reason, message, generation), { companyTenantId: company.id });
    return { requeueAfterMs: FAILED_RETRY_MS };
  }

  const { app, child } = declared;
  const fields = { appId: app.id, companyTenantId: company.id, ...(child ? { childTenantId: child.id } : {}) };
  if (child?.status === 'failed') {
    const message = `child tenant "${child.slug}" failed: ${child.statusReason ?? 'provisioning failed'}`;
    await report('Failed', condition(ConditionType.Ready, 'False', Reason.ProvisionFailed, message, generation), fields);
    return undefined;
  }
  if (child && child.status !== 'active') {
    await report('Provisioning', condition(ConditionType.Ready, 'False', Reason.ChildTenantProvisioning, `child tenant "${child.slug}" is ${child.status}`, generation), fields);
    return { requeueAfterMs: PROVISIONING_POLL_MS, untilNotified: true };
  }
  await report('Ready', condition(ConditionType.Ready, 'True', Reason.Enrolled, `app ${key} is enrolled in ${company.slug}`, generation), fields);
  return undefined;
}
