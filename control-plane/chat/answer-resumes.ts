import type { Db } from '../db/client.ts';
import { NotFoundError, RateLimitError } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import { asUser } from './answer-scope.ts';
import type { AnswerStreams } from './answer-streams.ts';
import { countLiveFollowers, deleteFollower, findMessage, insertFollower, lockTenantFollowers, renewFollower } from './chat.repo.ts';
import { conversationIdOf } from './conversation-names.ts';
import type { ChatStreamItem } from './chat.schema.ts';

/**
 * Resumptions (`GET .../messages/:id/events`) one user may follow at a time, and one answer may
 * have at a time: each holds a connection and reads the answer's events until it ends.
 */
export const MAX_RESUMES_PER_USER = 5;
export const MAX_RESUMES_PER_MESSAGE = 3;
const RETRY_RESUME_AFTER_S = 5;

/** Answers followed again after a client lost them (`GET .../messages/:id/events`), within the limits above. */
export function createAnswerResumes(deps: { db: Db; streams: Pick<AnswerStreams, 'follow'>; leaseMs: number }) {
  const { db, streams, leaseMs } = deps;
  return {
    /**
     * The answer's ids, then its events after `lastEventId`, replayed then followed to its end;
     * 404 (before anything is yielded) for an answer the caller does not have.
     */
    async *resume(actor: Actor, input: { conversationId: string; messageId: string; lastEventId: number }, signal?: AbortSignal): AsyncGenerator<ChatStreamItem> {
      const { message, followerId } = await asUser(db, actor, async (tx) => {
        const message = await findMessage(tx, conversationIdOf(input.conversationId), input.messageId);
        if (!message || message.role !== 'assistant') throw new NotFoundError('answer');
        await lockTenantFollowers(tx);
        const live = await countLiveFollowers(tx, message.id);
        if (live.ofUser >= MAX_RESUMES_PER_USER) {
          throw new RateLimitError(RETRY_RESUME_AFTER_S, `resumed answers: a user may follow at most ${MAX_RESUMES_PER_USER} at a time; close one first`);
        }
        if (live.ofMessage >= MAX_RESUMES_PER_MESSAGE) {
          throw new RateLimitError(RETRY_RESUME_AFTER_S, `clients resuming this answer: at most ${MAX_RESUMES_PER_MESSAGE} at a time; close one first`);
        }
        return { message, followerId: await insertFollower(tx, message.id, leaseMs) };
      });
      const renew = setInterval(() => void asUser(db, actor, (tx) => renewFollower(tx, followerId, leaseMs)).catch(() => {}), Math.floor(leaseMs / 3));
      renew.unref();
      try {
        yield { started: { conversationId: message.conversationId, messageId: message.id } };
        yield* streams.follow({ tenantId: actor.tenantId, userId: actor.userId, conversationId: message.conversationId, messageId: message.id }, input.lastEventId, signal);
      } finally {
        clearInterval(renew);
        await asUser(db, actor, (tx) => deleteFollower(tx, followerId)).catch(() => {});
      }
    },
  };
}
