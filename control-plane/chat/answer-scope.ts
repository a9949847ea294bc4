import type { Db, Tx } from '../db/client.ts';
import { actAsUser } from './chat.repo.ts';

/** Whose answer: the rows it lives in are the user's, in the tenant. */
export interface AnswerScope {
  tenantId: string;
  userId: string;
  conversationId: string;
  messageId: string;
}

/** Runs `fn` in a transaction of the tenant as the user: conversations, messages and their events are the user's own rows (row-level security). */
export function asUser<T>(db: Db, who: { tenantId: string; userId: string }, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.inTenant(who.tenantId, async (tx) => {
    await actAsUser(tx, who.userId);
    return fn(tx);
  });
}
