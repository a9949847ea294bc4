import { ModelError } from '../ai/model.ts';
import type { Db, Tx } from '../db/client.ts';
import { DomainError } from '../errors.ts';
import { asUser, type AnswerScope } from './answer-scope.ts';
import type { AnswerEvent } from './answering.ts';
import { announceEvents, completeMessage, deleteStream, failMessage, insertEvents, renewStream } from './chat.repo.ts';
import type { ChatEvent, NumberedEvent } from './chat.schema.ts';
import { LiveAnswer } from './live-answer.ts';
import { CHAT_EVENTS_CHANNEL } from './stored-answers.ts';

/** What a failure becomes in the stream: the model's or the domain's code, else an internal error that says no more. */
export function errorEventOf(error: unknown): Extract<ChatEvent, { type: 'error' }> {
  if (error instanceof ModelError) return { type: 'error', data: { code: error.code, message: error.message } };
  if (error instanceof DomainError) return { type: 'error', data: { code: error.code, message: error.message } };
  return { type: 'error', data: { code: 'INTERNAL_ERROR', message: 'the answer could not be finished' } };
}

/**
 * Produces answers in this process: each answer's events are numbered, kept in `live` while it is
 * produced (for followers here) and stored in batches, each announced on CHAT_EVENTS_CHANNEL;
 * the stream's lease is renewed every `renewMs` until the answer ends.
 */
export function createAnswerProducer(deps: { db: Db; live: Map<string, LiveAnswer>; leaseMs: number; renewMs: number }) {
  const { live, leaseMs, renewMs } = deps;
  const inScope = <T>(scope: AnswerScope, fn: (tx: Tx) => Promise<T>) => asUser(deps.db, scope, fn);

  /**
   * Produces an answer from `source` in the background and returns at once. `abort` stops the
   * source when the answer can no longer be stored (its conversation was deleted).
   */
  function produce(scope: AnswerScope, source: AsyncIterable<AnswerEvent>, abort: AbortController): void {
    const answer = new LiveAnswer();
    live.set(scope.messageId, answer);
    const unstored: NumberedEvent[] = [];
    let writing: Promise<void> = Promise.resolve();
    let flushQueued = false;
    /** What the first failed write threw: the answer stops, and its message records that failure. */
    let storeFailure: { error: unknown } | undefined;

    const flush = () => {
      if (flushQueued) return;
      flushQueued = true;
      writing = writing.then(async () => {
        flushQueued = false;
        const batch = unstored.splice(0);
        if (!batch.length || storeFailure) return;
        await inScope(scope, async (tx) => {
          await insertEvents(tx, scope.messageId, batch);
          await announceEvents(tx, CHAT_EVENTS_CHANNEL, scope.messageId);
        }).catch((error: unknown) => {
          storeFailure ??= { error };
          abort.abort(error);
        });
      });
    };
    const renew = setInterval(() => void inScope(scope, (tx) => renewStream(tx, scope.messageId, leaseMs)).catch(() => {}), renewMs);
    renew.unref();

    const run = async () => {
      let content = '';
      const citations: Extract<ChatEvent, { type: 'citation' }>['data'][] = [];
      let last: ChatEvent;
      try {
        let usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
        for await (const event of source) {
          if (storeFailure) throw storeFailure.error;
          if (event.type === 'usage') {
            usage = event.usage;
            continue;
          }
          if (event.type === 'message') content = event.data.content;
          if (event.type === 'citation') citations.push(event.data);
          unstored.push(answer.push(event));
          flush();
        }
        last = { type: 'done', data: { conversationId: scope.conversationId, messageId: scope.messageId, usage } };
      } catch (error) {
        last = errorEventOf(storeFailure ? storeFailure.error : error);
      } finally {
        clearInterval(renew);
      }
      await writing;
      const numbered = { id: answer.events.length + 1, event: last };
      try {
        if (storeFailure) throw storeFailure.error;
        await inScope(scope, async (tx) => {
          const finished =
            last.type === 'done'
              ? await completeMessage(tx, scope.messageId, { content, citations, usage: last.data.usage })
              : await failMessage(tx, scope.messageId, last.data);
          if (!finished) throw new DomainError('INTERNAL_ERROR', 'the answer was closed by another process');
          await insertEvents(tx, scope.messageId, [...unstored.splice(0), numbered]);
          await deleteStream(tx, scope.messageId);
          await announceEvents(tx, CHAT_EVENTS_CHANNEL, scope.messageId);
        });
        answer.push(last);
      } catch (error) {
        // Not stored as finished: followers here learn it failed; elsewhere the lease runs out.
        answer.push(last.type === 'error' ? last : errorEventOf(error instanceof DomainError ? error : new DomainError('INTERNAL_ERROR', 'the answer could not be stored')));
      } finally {
        live.delete(scope.messageId);
      }
    };
    void run();
  }

  return produce;
}
