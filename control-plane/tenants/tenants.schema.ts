import { z } from 'zod';
import type { StorageBackend } from '../storage/storage.schema.ts';
import type { Declarer } from '../declarations/declarations.schema.ts';
import { UUID } from '../ids.ts';

export const USECASES = ['council', 'retail', 'healthcare', 'finance', 'manufacturing', 'generic'] as const;
export const HOME_REGIONS = ['au', 'ca', 'eu'] as const;
/** `provisioning` until the provisioning workflow ends; only `active` tenants are usable. */
export const TENANT_STATUSES = ['provisioning', 'active', 'failed', 'deleted'] as const;
export const DEFAULT_STARTER_TEMPLATE = 'blank-vertical-template';

/** Slugs and keys: lowercase letters and digits in groups joined by single hyphens. */
export const KEBAB_CASE = /^[a-z0-9]+(-[a-z0-9]+)*$/;
/** A tenant is named by id or slug, so a slug may not look like an id. */
export const NOT_A_UUID = 'must not have the form of a tenant id (a UUID)';
const DOMAIN_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

/** The issue for an enum field: missing, or not one of `values`. */
export const oneOf = (values: readonly string[]) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : `must be one of ${values.join(', ')}`;

const TenantFieldsSchema = z
  .object({
    name: z.string({ error: 'is required' }).trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
    slug: z
      .string({ error: 'is required' })
      .max(63, 'must be at most 63 characters')
      .regex(KEBAB_CASE, 'must be kebab-case: lowercase letters and digits in groups joined by single hyphens')
      .refine((slug) => !UUID.test(slug), NOT_A_UUID),
    domains: z
      .array(z.string().trim().toLowerCase().regex(DOMAIN_NAME, 'must be a domain name such as example.com'))
      .max(50, 'must list at most 50 domains')
      .default([])
      .transform((domains) => [...new Set(domains)]),
    usecase: z.enum(USECASES, { error: oneOf(USECASES) }).default('generic'),
    industry: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters').optional(),
    starterTemplate: z
      .string()
      .max(100, 'must be at most 100 characters')
      .regex(KEBAB_CASE, 'must be a kebab-case template key')
      .default(DEFAULT_STARTER_TEMPLATE),
    homeRegion: z.enum(HOME_REGIONS, { error: oneOf(HOME_REGIONS) }),
  })
  .strict();

/** A root tenant: its home region is required. */
export const CreateRootTenantInputSchema = TenantFieldsSchema;
export type CreateRootTenantInput = z.infer<typeof CreateRootTenantInputSchema>;

/** A child tenant of the caller's tenant: the home region defaults to the parent's. */
export const CreateChildTenantInputSchema = TenantFieldsSchema.extend({
  homeRegion: z.enum(HOME_REGIONS, { error: oneOf(HOME_REGIONS) }).optional(),
}).strict();
export type CreateChildTenantInput = z.infer<typeof CreateChildTenantInputSchema>;

export const TenantSchema = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  parentId: z.string().nullable(),
  domains: z.array(z.string()),
  usecase: z.enum(USECASES),
  industry: z.string().nullable(),
  starterTemplate: z.string(),
  homeRegion: z.enum(HOME_REGIONS).nullable(),
  status: z.enum(TENANT_STATUSES),
  /** Why provisioning failed; `null` otherwise. */
  statusReason: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Tenant = z.infer<typeof TenantSchema>;

/** A tenant's lifecycle status, as `tenants.watchStatus` yields it. */
export const TenantStatusSchema = TenantSchema.pick({ id: true, slug: true, status: true, statusReason: true });
export type TenantStatus = z.infer<typeof TenantStatusSchema>;

/** One membership of a user, seen from the tenant's side: what `GET /v4/identity/tenants` lists. */
export const TenantMembershipSchema = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  status: z.enum(TENANT_STATUSES),
  statusReason: z.string().nullable(),
  parentId: z.string().nullable(),
  homeRegion: z.enum(HOME_REGIONS).nullable(),
  roles: z.array(z.string()),
});
export type TenantMembership = z.infer<typeof TenantMembershipSchema>;

/** A membership row, as a grant (provision, bootstrap-admin) returns it. */
export const MembershipSchema = z.object({
  tenantId: z.string(),
  userId: z.string(),
  roles: z.array(z.string()),
  status: z.string(),
  createdAt: z.string(),
  /** Until when an invitation (`status: "invited"`) can be accepted; null for a membership. */
  expiresAt: z.string().nullable(),
});
export type Membership = z.infer<typeof MembershipSchema>;

/** A grant's result: `created` tells a new membership (201) from one that existed (200). */
export const MembershipGrantSchema = z.object({ membership: MembershipSchema, created: z.boolean() });
export type MembershipGrant = z.infer<typeof MembershipGrantSchema>;

/** A user as platform lookups show it: no preferences, no tenant-specific fields. */
export const PlatformUserSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  status: z.string(),
  /** Absent for an administrator who shares no tenant with the user (see `findUserByEmail`). */
  createdAt: z.string().optional(),
  lastLoginAt: z.string().nullable().optional(),
});
export type PlatformUser = z.infer<typeof PlatformUserSchema>;

export const TenantRefSchema = z.string({ error: 'is required' }).min(1, 'is required').max(200);
export const UserRefSchema = z.string({ error: 'is required' }).min(1, 'is required').max(200);

/** `GET /v4/platform/users/by-email?email=`. */
export const FindUserByEmailInputSchema = z.object({ email: z.string({ error: 'is required' }).max(320).trim().pipe(z.email('must be an e-mail address')) });

/** Self-provisioning; the input keeps the wire name `tenant_id`, so a validation error names it. */
export const ProvisionSelfInputSchema = z.object({ tenant_id: TenantRefSchema }).strict();

/** What the `provisionTenant` workflow receives. */
export interface ProvisionTenantPlan {
  tenantId: string;
  /** The storage backends to provision, in order; absent (as in runs started before it existed): every backend. */
  storageBackends?: StorageBackend[];
}

/** A tenant as a Kubernetes `Tenant` declares it (the CRD enforces the same rules as the v4 API). */
export interface TenantDeclaration {
  slug: string;
  name: string;
  parent?: string;
  domains: string[];
  usecase: (typeof USECASES)[number];
  industry?: string;
  starterTemplate: string;
  homeRegion?: (typeof HOME_REGIONS)[number];
  /** The storage backends a new tenant's provisioning sets up; absent: every backend. */
  storageBackends?: StorageBackend[];
  /** The Kubernetes object that declares the tenant: a tenant another object declares is refused. */
  declaredBy?: Declarer;
}
