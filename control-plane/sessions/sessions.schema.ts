import { z } from 'zod';

export const CreateSessionInputSchema = z.object({
  accessToken: z.string().min(1),
  refreshToken: z.string().min(1).optional(),
  idToken: z.string().min(1).optional(),
  /** Unix epoch seconds when the access token expires. */
  expiresAt: z.number().int().positive(),
});
export type CreateSessionInput = z.infer<typeof CreateSessionInputSchema>;

export const SessionIdInputSchema = z.object({ sessionId: z.string().min(32).max(128) });

export const SessionTokensSchema = z.object({ accessToken: z.string(), idToken: z.string().nullable() }).nullable();
