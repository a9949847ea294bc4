import type { Db } from '../db/client.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { mergePatch } from '../json/merge-patch.ts';
import { belongsElsewhere, findMember, listMembers, lockUserPreferences, updateUserProfile } from './users.repo.ts';
import type { ListUsersInputSchema, UpdateUserInput, User } from './users.schema.ts';
import type { z } from 'zod';

export type UsersService = ReturnType<typeof createUsersService>;

/** Users as members of the actor's tenant: profiles, preferences, and the admin listing. */
export function createUsersService(deps: { db: Db }) {
  const { db } = deps;
  const targetId = (actor: Actor, id: string) => (id === 'me' ? actor.userId : id);

  return {
    async get(actor: Actor, id: string): Promise<User> {
      const userId = targetId(actor, id);
      const user = await db.inTenant(actor.tenantId, (tx) => findMember(tx, userId));
      if (!user) throw new NotFoundError('user');
      if (userId !== actor.userId && !actor.permissions.has('users.read')) throw new ForbiddenError();
      return user;
    },

    async list(actor: Actor, input: z.output<typeof ListUsersInputSchema>) {
      return db.inTenant(actor.tenantId, (tx) => listMembers(tx, input));
    },

    /**
     * Changes `name` and deep-merges `preferences`: the user themself, or a holder of `users.manage`
     * for a user who belongs to no other tenant. A profile is one per user, seen in every tenant
     * the user belongs to, so one tenant's administrators may not change what another tenant sees.
     */
    async update(actor: Actor, input: UpdateUserInput): Promise<User> {
      const userId = targetId(actor, input.id);
      return db.inTenant(actor.tenantId, async (tx) => {
        if (!(await findMember(tx, userId))) throw new NotFoundError('user');
        const someoneElse = userId !== actor.userId;
        if (someoneElse && !actor.permissions.has('users.manage')) throw new ForbiddenError('you may change only your own profile');
        // The user's row stays locked until commit: a membership that another tenant adds meanwhile
        // (its foreign key takes a share lock on the row) waits for this change, or the check sees it.
        // The check runs in this transaction, which waits for no other connection while it holds the lock.
        const stored = await lockUserPreferences(tx, userId);
        if (someoneElse && (await belongsElsewhere(tx, userId))) {
          throw new ForbiddenError('the user belongs to other tenants too: only they may change their profile');
        }
        const { name, preferences: patch } = input.changes;
        const preferences = patch ? (mergePatch(stored ?? {}, patch) as Record<string, unknown>) : undefined;
        await updateUserProfile(tx, userId, { name, preferences });
        return (await findMember(tx, userId))!;
      });
    },
  };
}
