/** Condition types and reasons the operator writes, and builders for them (metav1.Condition shape). */
export const ConditionType = {
  Ready: 'Ready',
  StorageProvisioned: 'StorageProvisioned',
  Degraded: 'Degraded',
  /** The platform tenant is created or updated as declared (`DeclareTenant`). */
  TenantDeclared: 'TenantDeclared',
  /** The App's key can be made and equals the recorded one (`CheckAppKey`). */
  KeyValid: 'KeyValid',
  /** The App's company tenant exists and is active (`FindCompanyTenant`). */
  CompanyTenantFound: 'CompanyTenantFound',
  /** The App's child tenant's slug is valid (`CheckChildSlug`). */
  ChildSlugValid: 'ChildSlugValid',
  /** The App is enrolled in its company tenant (`EnrollApp`). */
  AppEnrolled: 'AppEnrolled',
  /** The tenant's Namespace exists (`EnsureNamespace`). */
  NamespaceReady: 'NamespaceReady',
  /** The connection Secret holds the tenant's connection details (`EnsureConnectionSecret`). */
  ConnectionSecretReady: 'ConnectionSecretReady',
  /** A deleted Tenant object declared its tenant, so the cleanup removes it (`LeaveUnclaimedTenant`). */
  TenantClaimed: 'TenantClaimed',
  /** A deleted Tenant object's tenant is soft-deleted (`SoftDeleteTenant`). */
  TenantRemoved: 'TenantRemoved',
  /** A deleted App's enrollment and child tenant are removed (`RemoveEnrollment`). */
  EnrollmentRemoved: 'EnrollmentRemoved',
} as const;

export const Reason = {
  Provisioned: 'Provisioned',
  Provisioning: 'Provisioning',
  ProvisionFailed: 'ProvisionFailed',
  StorageReady: 'StorageReady',
  StoragePending: 'StoragePending',
  StorageFailed: 'StorageFailed',
  AsExpected: 'AsExpected',
  Deleting: 'Deleting',
  Enrolled: 'Enrolled',
  EnrollFailed: 'EnrollFailed',
  CompanyTenantNotFound: 'CompanyTenantNotFound',
  WaitingForCompanyTenant: 'WaitingForCompanyTenant',
  ChildTenantProvisioning: 'ChildTenantProvisioning',
  KeyMismatch: 'KeyMismatch',
  InvalidKey: 'InvalidKey',
  InvalidChildSlug: 'InvalidChildSlug',
  /** Another Tenant or App object declares the same tenant or app. */
  DeclaredElsewhere: 'DeclaredElsewhere',
  Declared: 'Declared',
  KeyAccepted: 'KeyAccepted',
  CompanyTenantActive: 'CompanyTenantActive',
  ChildSlugAccepted: 'ChildSlugAccepted',
  NamespaceCreated: 'NamespaceCreated',
  SecretWritten: 'SecretWritten',
  /** The connection details are complete once the tenant's provisioning has ended. */
  WaitingForProvisioning: 'WaitingForProvisioning',
  Claimed: 'Claimed',
  /** The object never got its tenant: the cleanup leaves tenants alone. */
  Unclaimed: 'Unclaimed',
} as const;

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration: number;
  lastTransitionTime: string;
}

/** One condition per storage backend: `PostgresqlStorageProvisioned`, `BlobStorageProvisioned`, ... */
export const storageConditionType = (backend: string) => `${backend.charAt(0).toUpperCase()}${backend.slice(1)}${ConditionType.StorageProvisioned}`;

export function condition(type: string, status: Condition['status'], reason: string, message: string, generation: number): Omit<Condition, 'lastTransitionTime'> {
  return { type, status, reason, message: message.slice(0, 32_000), observedGeneration: generation };
}

/** Keeps `lastTransitionTime` of conditions whose status did not change, as Kubernetes conventions ask. */
export function mergeConditions(previous: readonly Condition[] | undefined, next: Omit<Condition, 'lastTransitionTime'>[], now: string): Condition[] {
  return next.map((c) => {
    const before = previous?.find((p) => p.type === c.type);
    return { ...c, lastTransitionTime: before && before.status === c.status ? before.lastTransitionTime : now };
  });
}
