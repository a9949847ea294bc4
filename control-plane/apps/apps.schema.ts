import { z } from 'zod';
import { KEBAB_CASE, NOT_A_UUID, oneOf, TenantRefSchema } from '../tenants/tenants.schema.ts';
import { UUID } from '../ids.ts';
import type { Declarer } from '../declarations/declarations.schema.ts';

/** App enrollments are resources of this built-in type in the company tenant. */
export const APP_OBJECT_TYPE = 'tenant-vertical-enrollment';
export const APP_STATUSES = ['pending', 'active', 'suspended', 'retired'] as const;
export const DEFAULT_APP_SOURCE = 'svc-cli';

const MAX_KEY_LENGTH = 63;

/**
 * The kebab-case of a display name, as the default key of an app (and slug of its child tenant):
 * accents dropped, words split at spaces, punctuation and camelCase, at most 63 characters.
 * Empty when the name has no letters or digits.
 */
export function kebabCase(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_KEY_LENGTH)
    .replace(/-+$/, '');
}

/** Why a child tenant's slug (given, or derived from its name) cannot be used; undefined when it can. */
export function childSlugIssue(slug: string): string | undefined {
  if (!slug) return 'cannot be derived from the name; give a kebab-case slug';
  if (UUID.test(slug)) return 'must not have the form of a tenant id (a UUID); give another slug';
  return undefined;
}

/** Written out in full (no spaces or backslashes, which a browser would mend), as the App CRD's rule requires too. */
const WRITTEN_OUT_HTTP_URL = /^https?:\/\/[^\s\\/?#][^\s\\]*$/i;

const isHttpUrl = (value: string) => {
  if (!WRITTEN_OUT_HTTP_URL.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
};

const kebabKey = (max: number, what: string) =>
  z.string().max(max, `must be at most ${max} characters`).regex(KEBAB_CASE, `must be a kebab-case ${what}: lowercase letters and digits in groups joined by single hyphens`);

const DisplayNameSchema = z.string({ error: 'is required' }).trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');

/** `POST /v4/platform/tenants/{companyTenantId}/apps`. */
export const CreateAppInputSchema = z
  .object({
    name: DisplayNameSchema,
    /** Defaults to the kebab-case of `name`. */
    key: kebabKey(MAX_KEY_LENGTH, 'key').optional(),
    template: kebabKey(100, 'template key').optional(),
    source: kebabKey(MAX_KEY_LENGTH, 'source').default(DEFAULT_APP_SOURCE),
    appUrl: z.string().max(2048, 'must be at most 2048 characters').refine(isHttpUrl, 'must be an absolute http or https URL').optional(),
    status: z.enum(APP_STATUSES, { error: oneOf(APP_STATUSES) }).default('pending'),
    /** A child tenant created for the app; its slug defaults to the kebab-case of its name. */
    childTenant: z
      .object({ name: DisplayNameSchema, slug: kebabKey(MAX_KEY_LENGTH, 'slug').refine((slug) => !UUID.test(slug), NOT_A_UUID).optional() })
      .strict()
      .optional(),
    /** Where the child tenant goes: the company tenant (default) or a tenant below it. */
    parentTenant: TenantRefSchema.optional(),
  })
  .strict()
  .refine((input) => input.parentTenant === undefined || input.childTenant !== undefined, {
    message: 'is only allowed with child_tenant',
    path: ['parentTenant'],
  });
export type CreateAppInput = z.infer<typeof CreateAppInputSchema>;

export const AppSchema = z.object({
  id: z.string(),
  key: z.string(),
  name: z.string(),
  template: z.string().nullable(),
  source: z.string(),
  appUrl: z.string().nullable(),
  status: z.enum(APP_STATUSES),
  companyTenantId: z.string(),
  childTenantId: z.string().nullable(),
  childTenantSlug: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type App = z.infer<typeof AppSchema>;

/** What an enrollment resource holds (its `data`). */
export interface AppData {
  key: string;
  name: string;
  template?: string;
  source: string;
  appUrl?: string;
  status: (typeof APP_STATUSES)[number];
  childTenantId?: string;
  childTenantSlug?: string;
}

/** An app as a Kubernetes `App` declares it (the CRD enforces the same field rules as v4). */
export type AppDeclaration = Omit<AppData, 'childTenantId' | 'childTenantSlug'> & {
  /** Slug of the company tenant. */
  companyTenant: string;
  childTenant?: { name: string; slug: string };
  /** Slug of the tenant under which the child tenant is created: the company tenant or one below it (default: the company tenant). */
  parentTenant?: string;
  /** The Kubernetes object that declares the app (and its child tenant): an app another object declares is refused. */
  declaredBy?: Declarer;
};
