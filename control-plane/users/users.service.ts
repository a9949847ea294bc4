import type { Db } from '../db/client.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import { belongsElsewhere, findMember, listMembers } from './users.repo.ts';
import type { ListUsersInputSchema, UpdateUserInput, User } from './users.schema.ts';
import type { z } from 'zod';

export type UsersService = ReturnType<typeof createUsersService>;

/** Users as members of the actor's tenant: profiles, preferences, and the admin listing. The profile itself is identity's to change. */
export function createUsersService(deps: { db: Db; identity: Pick<IdentityService, 'changeProfile'> }) {
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
        await deps.identity.changeProfile(tx, userId, input.changes, async () => {
          if (someoneElse && (await belongsElsewhere(tx, userId))) {
            throw new ForbiddenError('the user belongs to other tenants too: only they may change their profile');
          }
        });
        return (await findMember(tx, userId))!;
      });
    },
  };
}
