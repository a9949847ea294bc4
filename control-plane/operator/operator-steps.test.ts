import { describe, expect, it } from 'vitest';
import type { BackendStatus } from '../storage/storage.schema.ts';
import type { Tenant } from '../tenants/tenants.schema.ts';
import type { AppObject } from './app-object.ts';
import type { AppRun, ReconcileAppDeps } from './app-run.ts';
import { condition, type Condition } from './conditions.ts';
import type { Kube } from './kube.ts';
import { finalizeAppSteps } from './reconcile-app.ts';
import { finalizeTenantSteps, reconcileTenantSteps } from './reconcile-tenant.ts';
import { createStatusDraft } from './runtime/status-draft.ts';
import { runSteps, type Step, type StepOutcome, type StepRun, type StatusWriter } from './runtime/step-runner.ts';
import { DeclaredElsewhereError } from '../errors.ts';
import { checkAppKey } from './steps/check-app-key.ts';
import { checkChildSlug } from './steps/check-child-slug.ts';
import { declareTenant } from './steps/declare-tenant.ts';
import { enrollApp } from './steps/enroll-app.ts';
import { ensureConnectionSecret } from './steps/ensure-secret.ts';
import { findCompanyTenant } from './steps/find-company-tenant.ts';
import { ensureTenantNamespace } from './steps/ensure-namespace.ts';
import { leaveUnclaimedTenant } from './steps/leave-unclaimed-tenant.ts';
import { removeEnrollment } from './steps/remove-enrollment.ts';
import { softDeleteTenant } from './steps/soft-delete-tenant.ts';
import type { TenantObject } from './tenant-object.ts';
import type { ReconcileTenantDeps, TenantRun } from './tenant-run.ts';

const NOW = '2026-12-07T12:00:00.000Z';
const BEFORE = '2026-12-01T00:00:00.000Z';

const tenantObject = (status?: TenantObject['status']): TenantObject => ({
  apiVersion: 'platform.svc.dev/v1alpha1',
  kind: 'Tenant',
  metadata: { name: 'acme', uid: 'u-tenant', generation: 2 },
  spec: { name: 'Acme', slug: 'acme', homeRegion: 'eu', storageBackends: ['postgresql'] },
  ...(status ? { status } : {}),
});

const appObject = (status?: AppObject['status']): AppObject => ({
  apiVersion: 'platform.svc.dev/v1alpha1',
  kind: 'App',
  metadata: { name: 'portal', uid: 'u-app', generation: 4 },
  spec: { name: 'Portal', key: 'portal', companyTenant: 'acme' },
  ...(status ? { status } : {}),
});

const tenant = (status: Tenant['status']): Tenant => ({
  id: 't-1',
  slug: 'acme',
  name: 'Acme',
  parentId: null,
  domains: [],
  usecase: 'generic',
  industry: null,
  starterTemplate: 'blank-vertical-template',
  homeRegion: 'eu',
  status,
  statusReason: null,
  createdAt: BEFORE,
  updatedAt: BEFORE,
});

const postgresql = (status: BackendStatus['status']): BackendStatus => ({
  backend: 'postgresql',
  status,
  location: { schema: 't_1' } as unknown as BackendStatus['location'],
  provisionedAt: null,
  updatedAt: null,
  error: null,
});

/** A Kubernetes API that notes the core calls sent and answers them as a fresh cluster would. */
function fakeKube() {
  const sent: string[] = [];
  const answer = (name: string) => (): Promise<object> => {
    sent.push(name);
    if (name === 'readNamespacedSecret') return Promise.reject(Object.assign(new Error('not found'), { code: 404 }));
    return Promise.resolve({});
  };
  const core = Object.fromEntries(['createNamespace', 'createNamespacedSecret', 'readNamespacedSecret', 'replaceNamespacedSecret'].map((name) => [name, answer(name)]));
  return { kube: { core } as unknown as Kube, sent };
}

function tenantDeps(readiness: BackendStatus[] = [postgresql('ready')]) {
  const calls: string[] = [];
  const deps: ReconcileTenantDeps = {
    tenants: {
      declare: () => Promise.resolve(tenant('active')),
      removeDeclared: (slug) => {
        calls.push(`removeDeclared ${slug}`);
        return Promise.resolve();
      },
    },
    storageReadiness: (tenantId) => Promise.resolve({ tenantId, ready: true, backends: readiness }),
    provisionStorage: () => Promise.resolve(),
    publicUrl: 'https://platform.example',
    ensured: new Map(),
    event: () => Promise.resolve(),
  };
  return { deps, calls };
}

/** Runs one step alone on a fresh draft: its outcome and the conditions it set, by type. */
async function runStep<R extends StepRun>(step: Step<R>, run: Omit<R, 'status'>): Promise<{ outcome: StepOutcome; conditions: Record<string, Pick<Condition, 'status' | 'reason' | 'message'>> }> {
  const draft = createStatusDraft();
  const full = { ...run, status: draft.draft } as R;
  const outcome = await step.run(full);
  const status = draft.toStatus(run.object.status?.conditions, NOW);
  const conditions = Object.fromEntries(((status?.conditions ?? []) as Condition[]).map((c) => [c.type, { status: c.status, reason: c.reason, message: c.message }]));
  return { outcome, conditions };
}

/** A writer that notes the patches and Events the runner sends. */
function recording() {
  const patches: Record<string, unknown>[] = [];
  const events: string[] = [];
  const writer: StatusWriter = {
    patch(status) {
      patches.push(status);
      return Promise.resolve();
    },
    event(type, reason) {
      events.push(`${type} ${reason}`);
      return Promise.resolve();
    },
  };
  return { patches, events, writer };
}

const typesOf = (patch: Record<string, unknown> | undefined) => ((patch?.conditions ?? []) as Condition[]).map((c) => `${c.type}=${c.status} ${c.reason}`);

describe('operator steps: each sets a condition of its own', () => {
  it('EnsureNamespace: NamespaceReady True once the Namespace is ensured', async () => {
    const { kube, sent } = fakeKube();
    const { deps } = tenantDeps();
    const { outcome, conditions } = await runStep<TenantRun>(ensureTenantNamespace, { object: tenantObject(), kube, deps });
    expect(outcome).toBe('continue');
    expect(sent).toEqual(['createNamespace']);
    expect(conditions).toEqual({ NamespaceReady: { status: 'True', reason: 'NamespaceCreated', message: 'Namespace tenant-acme exists' } });
  });

  it('EnsureConnectionSecret: False (WaitingForProvisioning) while provisioning, True (SecretWritten) once written', async () => {
    const { kube, sent } = fakeKube();
    const { deps } = tenantDeps();
    const waiting = await runStep<TenantRun>(ensureConnectionSecret, { object: tenantObject(), kube, deps, tenant: tenant('provisioning') });
    expect(waiting.outcome).toBe('continue');
    expect(sent).toEqual([]);
    expect(waiting.conditions).toEqual({
      ConnectionSecretReady: { status: 'False', reason: 'WaitingForProvisioning', message: 'the connection details are complete once tenant acme is provisioned' },
    });

    const written = await runStep<TenantRun>(ensureConnectionSecret, { object: tenantObject(), kube, deps, tenant: tenant('active'), storage: [postgresql('ready')] });
    expect(sent).toEqual(['createNamespacedSecret']);
    expect(written.conditions).toEqual({
      ConnectionSecretReady: { status: 'True', reason: 'SecretWritten', message: 'Secret tenant-acme/tenant-connection holds the connection details' },
    });
  });

  it('LeaveUnclaimedTenant: TenantClaimed True for an object that got its tenant, False (Unclaimed) with the other conditions kept for one that never did', async () => {
    const { kube } = fakeKube();
    const { deps } = tenantDeps();
    const claimed = await runStep<TenantRun>(leaveUnclaimedTenant, { object: tenantObject({ phase: 'Failed', tenantId: 't-1' }), kube, deps });
    expect(claimed.outcome).toBe('continue');
    expect(claimed.conditions).toEqual({ TenantClaimed: { status: 'True', reason: 'Claimed', message: 'tenant acme goes with this object' } });

    const refused = { ...condition('Ready', 'False', 'DeclaredElsewhere', 'tenant "acme" is declared by Tenant "other"', 2), lastTransitionTime: BEFORE };
    const unclaimed = await runStep<TenantRun>(leaveUnclaimedTenant, { object: tenantObject({ phase: 'Failed', conditions: [refused] }), kube, deps });
    expect(unclaimed.outcome).toBe('stop');
    expect(unclaimed.conditions).toEqual({
      Ready: { status: 'False', reason: 'DeclaredElsewhere', message: 'tenant "acme" is declared by Tenant "other"' },
      TenantClaimed: { status: 'False', reason: 'Unclaimed', message: 'this object never got tenant acme: it is left alone' },
    });
  });

  it('SoftDeleteTenant: TenantRemoved False (Deleting), written with the Deleting status before the tenant is soft-deleted', async () => {
    const { kube } = fakeKube();
    const { deps, calls } = tenantDeps();
    const draft = createStatusDraft();
    softDeleteTenant.announce!({ object: tenantObject(), kube, deps, status: draft.draft });
    expect(typesOf(draft.toStatus(undefined, NOW))).toEqual(['TenantRemoved=False Deleting']);

    const namespaceReady = { ...condition('NamespaceReady', 'True', 'NamespaceCreated', 'Namespace tenant-acme exists', 2), lastTransitionTime: BEFORE };
    const ready = { ...condition('Ready', 'True', 'Provisioned', 'tenant and storage are provisioned', 2), lastTransitionTime: BEFORE };
    const object = tenantObject({ phase: 'Ready', tenantId: 't-1', conditions: [ready, namespaceReady] });
    const { patches, events, writer } = recording();
    const patchedBeforeRemoval: number[] = [];
    const watched: ReconcileTenantDeps = {
      ...deps,
      tenants: {
        ...deps.tenants,
        removeDeclared: (slug, declarer) => (patchedBeforeRemoval.push(patches.length), deps.tenants.removeDeclared(slug, declarer)),
      },
    };
    expect(await runSteps(finalizeTenantSteps, (status) => ({ object, kube, deps: watched, status }), writer)).toBeUndefined();
    expect(patchedBeforeRemoval).toEqual([1]);
    expect(calls).toEqual(['removeDeclared acme']);
    expect(patches).toHaveLength(1);
    expect(patches[0]!.phase).toBe('Deleting');
    expect(typesOf(patches[0])).toEqual(['Ready=False Deleting', 'TenantClaimed=True Claimed', 'NamespaceReady=True NamespaceCreated', 'TenantRemoved=False Deleting']);
    expect(events).toEqual(['Normal Deleted']);
  });

  it('the finalizer of a Tenant object that never got its tenant writes TenantClaimed False and soft-deletes nothing', async () => {
    const { kube } = fakeKube();
    const { deps, calls } = tenantDeps();
    const refused = { ...condition('Ready', 'False', 'DeclaredElsewhere', 'declared elsewhere', 2), lastTransitionTime: BEFORE };
    const { patches, events, writer } = recording();
    await runSteps(finalizeTenantSteps, (status) => ({ object: tenantObject({ phase: 'Failed', conditions: [refused] }), kube, deps, status }), writer);
    expect(calls).toEqual([]);
    expect(events).toEqual([]);
    expect(patches).toHaveLength(1);
    expect(patches[0]!.phase).toBeUndefined();
    expect(typesOf(patches[0])).toEqual(['Ready=False DeclaredElsewhere', 'TenantClaimed=False Unclaimed']);
  });

  it('RemoveEnrollment: EnrollmentRemoved False (Deleting), written with the Deleting status before the enrollment is removed', async () => {
    const removed: string[] = [];
    const { patches, events, writer } = recording();
    const deps: ReconcileAppDeps = {
      apps: {
        declare: () => Promise.reject(new Error('not called')),
        removeDeclared: (company, key) => (removed.push(`${company}/${key} after ${patches.length} patch`), Promise.resolve()),
      },
      tenants: { find: () => Promise.resolve(undefined) },
      event: () => Promise.resolve(),
    };
    const { kube } = fakeKube();
    const draft = createStatusDraft();
    removeEnrollment.announce!({ object: appObject(), kube, deps, key: 'portal', status: draft.draft });
    expect(typesOf(draft.toStatus(undefined, NOW))).toEqual(['EnrollmentRemoved=False Deleting']);

    const object = appObject({ phase: 'Ready', key: 'portal' });
    await runSteps(finalizeAppSteps, (status): AppRun => ({ object, kube, deps, key: 'portal', status }), writer);
    expect(removed).toEqual(['acme/portal after 1 patch']);
    expect(patches[0]!.phase).toBe('Deleting');
    expect(typesOf(patches[0])).toEqual(['Ready=False Deleting', 'EnrollmentRemoved=False Deleting']);
    expect((patches[0]!.conditions as Condition[])[1]!.message).toBe('removing app portal from acme');
    expect(events).toEqual(['Normal Deleted']);
  });

  it('a Tenant reconciled to Ready carries each step’s condition, Ready first and Degraded last', async () => {
    const { kube } = fakeKube();
    const { deps } = tenantDeps();
    const { patches, writer } = recording();
    expect(await runSteps(reconcileTenantSteps, (status) => ({ object: tenantObject(), kube, deps, status }), writer)).toBeUndefined();
    expect(patches[0]).toMatchObject({ phase: 'Ready', namespace: 'tenant-acme', secretName: 'tenant-connection', tenantId: 't-1' });
    expect(typesOf(patches[0])).toEqual([
      'Ready=True Provisioned',
      'TenantDeclared=True Declared',
      'NamespaceReady=True NamespaceCreated',
      'PostgresqlStorageProvisioned=True StorageReady',
      'ConnectionSecretReady=True SecretWritten',
      'Degraded=False AsExpected',
    ]);
  });

  it('DeclareTenant: TenantDeclared True once declared, False with the refusal (and Ready, Degraded) otherwise', async () => {
    const { kube } = fakeKube();
    const { deps } = tenantDeps();
    const declared = await runStep<TenantRun>(declareTenant, { object: tenantObject(), kube, deps });
    expect(declared.outcome).toBe('continue');
    expect(declared.conditions).toEqual({ TenantDeclared: { status: 'True', reason: 'Declared', message: 'tenant acme (t-1)' } });

    const refusing = { ...deps, tenants: { ...deps.tenants, declare: () => Promise.reject(new Error('home region cannot change')) } };
    const refused = await runStep<TenantRun>(declareTenant, { object: tenantObject(), kube, deps: refusing });
    expect(refused.outcome).toEqual({ requeueAfterMs: 10_000 });
    expect(refused.conditions).toEqual({
      Ready: { status: 'False', reason: 'ProvisionFailed', message: 'home region cannot change' },
      TenantDeclared: { status: 'False', reason: 'ProvisionFailed', message: 'home region cannot change' },
      Degraded: { status: 'True', reason: 'ProvisionFailed', message: 'home region cannot change' },
    });
  });

  describe('App steps', () => {
    const appDeps = (company: Tenant | undefined, declare: ReconcileAppDeps['apps']['declare'] = () => Promise.resolve({ app: { id: 'a-1' } } as never)): ReconcileAppDeps => ({
      apps: { declare, removeDeclared: () => Promise.resolve() },
      tenants: { find: () => Promise.resolve(company) },
      event: () => Promise.resolve(),
    });
    const appRun = (object: AppObject, deps: ReconcileAppDeps, more: Partial<AppRun> = {}): Omit<AppRun, 'status'> => ({ object, kube: fakeKube().kube, deps, key: 'portal', ...more });

    it('CheckAppKey: KeyValid True with the key, False (KeyMismatch) for a changed one', async () => {
      const valid = await runStep(checkAppKey, appRun(appObject(), appDeps(undefined)));
      expect(valid.outcome).toBe('continue');
      expect(valid.conditions).toEqual({ KeyValid: { status: 'True', reason: 'KeyAccepted', message: 'the app\'s key is "portal"' } });
      const changed = await runStep(checkAppKey, appRun(appObject({ key: 'old-portal' }), appDeps(undefined)));
      expect(changed.outcome).toBe('stop');
      expect(changed.conditions.KeyValid).toMatchObject({ status: 'False', reason: 'KeyMismatch' });
      expect(changed.conditions.Ready).toMatchObject({ status: 'False', reason: 'KeyMismatch' });
    });

    it('FindCompanyTenant: CompanyTenantFound False while missing or provisioning, True once active', async () => {
      const missing = await runStep(findCompanyTenant, appRun(appObject(), appDeps(undefined)));
      expect(missing.conditions.CompanyTenantFound).toEqual({ status: 'False', reason: 'CompanyTenantNotFound', message: 'company tenant "acme" does not exist' });
      const waiting = await runStep(findCompanyTenant, appRun(appObject(), appDeps(tenant('provisioning'))));
      expect(waiting.outcome).toEqual({ requeueAfterMs: 5_000, untilNotified: true });
      expect(waiting.conditions.CompanyTenantFound).toEqual({ status: 'False', reason: 'WaitingForCompanyTenant', message: 'company tenant "acme" is provisioning' });
      const found = await runStep(findCompanyTenant, appRun(appObject(), appDeps(tenant('active'))));
      expect(found.outcome).toBe('continue');
      expect(found.conditions).toEqual({ CompanyTenantFound: { status: 'True', reason: 'CompanyTenantActive', message: 'company tenant "acme" (t-1) is active' } });
    });

    it('CheckChildSlug: ChildSlugValid True without a child or with a valid slug, False (InvalidChildSlug) otherwise', async () => {
      const none = await runStep(checkChildSlug, appRun(appObject(), appDeps(undefined)));
      expect(none.conditions).toEqual({ ChildSlugValid: { status: 'True', reason: 'ChildSlugAccepted', message: 'the app has no child tenant' } });
      const withChild = (slug: string) => ({ ...appObject(), spec: { ...appObject().spec, childTenant: { name: 'Portal Child', slug } } });
      const valid = await runStep(checkChildSlug, appRun(withChild('portal-child'), appDeps(undefined)));
      expect(valid.outcome).toBe('continue');
      expect(valid.conditions.ChildSlugValid).toMatchObject({ status: 'True', message: 'the child tenant\'s slug is "portal-child"' });
      const invalid = await runStep(checkChildSlug, appRun(withChild('5f0c1a5e-0000-4000-8000-000000000001'), appDeps(undefined)));
      expect(invalid.outcome).toBe('stop');
      expect(invalid.conditions.ChildSlugValid).toMatchObject({ status: 'False', reason: 'InvalidChildSlug' });
    });

    it('EnrollApp: AppEnrolled True once enrolled, False (DeclaredElsewhere) when another App declares it', async () => {
      const company = tenant('active');
      const enrolled = await runStep(enrollApp, appRun(appObject(), appDeps(company), { company }));
      expect(enrolled.outcome).toBe('continue');
      expect(enrolled.conditions).toEqual({ AppEnrolled: { status: 'True', reason: 'Enrolled', message: 'app portal (a-1) is enrolled in acme' } });
      const holder = { kind: 'App' as const, name: 'other', uid: 'u-other' };
      const refusing = appDeps(company, () => Promise.reject(new DeclaredElsewhereError('app "portal" of "acme"', holder)));
      const kube = { custom: { getClusterCustomObject: () => Promise.resolve({ metadata: { uid: 'u-other' } }) } } as unknown as Kube;
      const refused = await runStep(enrollApp, { ...appRun(appObject(), refusing, { company }), kube });
      expect(refused.outcome).toEqual({ requeueAfterMs: 10_000 });
      expect(refused.conditions.AppEnrolled).toMatchObject({ status: 'False', reason: 'DeclaredElsewhere' });
      expect(refused.conditions.Ready).toMatchObject({ status: 'False', reason: 'DeclaredElsewhere' });
    });
  });
});
