import { z } from 'zod';
import { PreferencesPatchSchema } from '../identity/identity.schema.ts';
import { LimitSchema, OffsetSchema } from '../query/paging.ts';

export const UserSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  avatar: z.string().nullable(),
  role: z.string(),
  permissions: z.array(z.string()),
  tenantId: z.string(),
  status: z.string(),
  preferences: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
  lastLoginAt: z.string().nullable(),
});
export type User = z.infer<typeof UserSchema>;

/** `me` or any string: an id that names no member of the tenant (a non-UUID included) is a 404. */
export const UserIdSchema = z.string().min(1);

export const UserRefInputSchema = z.object({ id: UserIdSchema });

export const ListUsersInputSchema = z.object({
  role: z.string().max(100).optional(),
  status: z.enum(['active', 'inactive']).optional(),
  search: z.string().max(200).optional(),
  limit: LimitSchema,
  offset: OffsetSchema.default(0),
});
export type ListUsersInput = z.input<typeof ListUsersInputSchema>;

export const UserPageSchema = z.object({ items: z.array(UserSchema), total: z.number().int() });

/**
 * The user named by `id` (the path's) and the request body as `changes`, kept apart so that an
 * `id` in the body is an unknown field (400) rather than silently dropped or obeyed.
 */
export const UpdateUserInputSchema = z.object({
  id: UserIdSchema,
  changes: z
    .object({
      name: z.string().trim().min(1, 'must not be empty').max(200).optional(),
      preferences: PreferencesPatchSchema.optional(),
    })
    .strict(),
});
export type UpdateUserInput = z.infer<typeof UpdateUserInputSchema>;
