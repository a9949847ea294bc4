import type { Db, Tx } from '../db/client.ts';
import { asUser, type AnswerScope } from './answer-scope.ts';
import { announceEvents, answerState, deleteStream, failMessage, insertEvents, lastEventSeq, readStoredEvents } from './chat.repo.ts';
import { isTerminal, type ChatEvent, type NumberedEvent } from './chat.schema.ts';
import { abortedBy } from './live-answer.ts';

/** The channel on which a producer announces stored events (payload: the message id). */
export const CHAT_EVENTS_CHANNEL = 'svc_chat_events';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

const INTERRUPTED = { code: 'INTERNAL_ERROR', message: 'the answer was interrupted before it was finished' };

/**
 * Answers followed from their stored events, by a process that does not produce them: woken by
 * the announcements on CHAT_EVENTS_CHANNEL and looking again every `pollMs` without one. An
 * answer whose producer stopped renewing its lease is recorded as failed, by whoever sees it first.
 */
export function createStoredAnswers(deps: { db: Db; pollMs: number }) {
  const { db, pollMs } = deps;
  const woken = new Map<string, Set<() => void>>();
  let listening: Promise<unknown> | undefined;
  const inScope = <T>(scope: AnswerScope, fn: (tx: Tx) => Promise<T>) => asUser(db, scope, fn);

  /** Calls `wake` whenever a producer anywhere announces events of `messageId`, from when this resolves. */
  async function listenFor(messageId: string, wake: () => void): Promise<() => void> {
    listening ??= db.sql
      .listen(CHAT_EVENTS_CHANNEL, (payload) => woken.get(payload)?.forEach((fn) => fn()))
      .catch((error: unknown) => {
        listening = undefined;
        throw error;
      });
    if (!woken.has(messageId)) woken.set(messageId, new Set());
    woken.get(messageId)!.add(wake);
    // Without the notifications a follower still polls.
    await listening.catch(() => undefined);
    return () => {
      const set = woken.get(messageId);
      set?.delete(wake);
      if (set?.size === 0) woken.delete(messageId);
    };
  }

  async function* followStored(scope: AnswerScope, after: number, signal?: AbortSignal): AsyncGenerator<NumberedEvent> {
    let wake: () => void = () => {};
    const stopListening = await listenFor(scope.messageId, () => wake());
    try {
      let seq = 0;
      let content = '';
      for (;;) {
        const woke = new Promise<void>((resolve) => (wake = resolve));
        const { state, rows } = await inScope(scope, async (tx) => {
          // The state first: when it says finished, the events read after it include the last one.
          const state = await answerState(tx, scope.messageId);
          return { state, rows: await readStoredEvents(tx, scope.messageId, seq) };
        });
        for (const row of rows) {
          seq = row.seq;
          let event = { type: row.type, data: row.data } as ChatEvent;
          if (row.type === 'message') {
            const delta = String(row.data.delta ?? '');
            content += delta;
            event = { type: 'message', data: { content, delta } };
          }
          if (row.seq > after) yield { id: row.seq, event };
          if (isTerminal(event)) return;
        }
        if (!state || state.status !== 'streaming') return;
        if (!state.live) {
          // Its producer is gone: the answer is recorded as failed, once, by whoever sees it first.
          await inScope(scope, async (tx) => {
            if (!(await failMessage(tx, scope.messageId, INTERRUPTED))) return;
            await insertEvents(tx, scope.messageId, [{ id: (await lastEventSeq(tx, scope.messageId)) + 1, event: { type: 'error', data: INTERRUPTED } }]);
            await deleteStream(tx, scope.messageId);
            await announceEvents(tx, CHAT_EVENTS_CHANNEL, scope.messageId);
          });
          continue;
        }
        if (signal?.aborted) return;
        await Promise.race([woke, sleep(pollMs), abortedBy(signal)]);
        if (signal?.aborted) return;
      }
    } finally {
      stopListening();
    }
  }

  return { follow: followStored };
}
