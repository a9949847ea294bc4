import { z } from 'zod';
import { AppSchema } from '../apps/apps.schema.ts';
import { ObjectTypeSchema } from '../object-types/object-types.schema.ts';
import {
  DeleteResourceInputSchema,
  IdempotentCreateInputSchema,
  ListResourcePageInputSchema,
  ReplaceAtVersionInputSchema,
  ResourceRefSchema,
} from '../resources/resources.schema.ts';
import { KEBAB_CASE, TENANT_STATUSES } from '../tenants/tenants.schema.ts';

/** `{key}` of `/v4/verticals/{key}/...`: the key of an app enrolled in the company tenant. */
export const VerticalKeySchema = z
  .string({ error: 'is required' })
  .max(63, 'must be at most 63 characters')
  .regex(KEBAB_CASE, 'must be the kebab-case key of an app');

const withKey = { key: VerticalKeySchema };

export const VerticalRefSchema = z.object(withKey).strict();

/** An app's surface: its enrollment, the tenant its resources live in (its child tenant, else the company tenant), and that tenant's published object types. */
export const VerticalSchema = z.object({
  app: AppSchema,
  tenant: z.object({ id: z.string(), slug: z.string(), status: z.enum(TENANT_STATUSES) }),
  objectTypes: z.array(ObjectTypeSchema),
});
export type Vertical = z.infer<typeof VerticalSchema>;

export const ListVerticalResourcesInputSchema = ListResourcePageInputSchema.safeExtend(withKey);
export const VerticalResourceRefSchema = ResourceRefSchema.extend(withKey).strict();
export const CreateVerticalResourceInputSchema = IdempotentCreateInputSchema.extend(withKey).strict();
export const ReplaceVerticalResourceInputSchema = ReplaceAtVersionInputSchema.extend(withKey).strict();
/** PATCH: `data` is a JSON merge patch (RFC 7386); the version, in the body or `If-Match`, is optional. */
export const UpdateVerticalResourceInputSchema = ReplaceAtVersionInputSchema.extend(withKey).strict();
export type UpdateVerticalResourceInput = z.infer<typeof UpdateVerticalResourceInputSchema>;
export const DeleteVerticalResourceInputSchema = DeleteResourceInputSchema.extend(withKey).strict();
