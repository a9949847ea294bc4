import { ModelError } from '../ai/model.ts';
import type { Db, Tx } from '../db/client.ts';
import { DomainError } from '../errors.ts';
import type { AnswerEvent } from './answering.ts';
import {
  actAsUser,
  announceEvents,
  answerState,
  completeMessage,
  deleteStream,
  failMessage,
  insertEvents,
  lastEventSeq,
  readStoredEvents,
  renewStream,
} from './chat.repo.ts';
import { isTerminal, type ChatEvent, type NumberedEvent } from './chat.schema.ts';

/** The channel on which a producer announces stored events (payload: the message id). */
export const CHAT_EVENTS_CHANNEL = 'svc_chat_events';

/** Whose answer: the rows it lives in are the user's, in the tenant. */
export interface AnswerScope {
  tenantId: string;
  userId: string;
  conversationId: string;
  messageId: string;
}

export interface AnswerStreamSettings {
  /** How long an answer's stream counts without its producer renewing it. Default 30 s. */
  leaseMs?: number;
  /** How often a producer renews its lease. Default a third of the lease. */
  renewMs?: number;
  /** How often a follower in another process looks again without being woken. Default 2 s. */
  pollMs?: number;
}

/** The events of one answer produced in this process, with their numbers, and its followers here. */
class LiveAnswer {
  readonly events: NumberedEvent[] = [];
  private wake: Array<() => void> = [];

  push(event: ChatEvent): NumberedEvent {
    const numbered = { id: this.events.length + 1, event };
    this.events.push(numbered);
    for (const resolve of this.wake.splice(0)) resolve();
    return numbered;
  }

  /** Resolves at the next event. */
  changed(): Promise<void> {
    return new Promise((resolve) => this.wake.push(resolve));
  }
}

/** Resolves when `signal` aborts (never without one). */
const abortedBy = (signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => (signal?.aborted ? resolve() : signal?.addEventListener('abort', () => resolve(), { once: true })));

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** What a failure becomes in the stream: the model's or the domain's code, else an internal error that says no more. */
export function errorEventOf(error: unknown): Extract<ChatEvent, { type: 'error' }> {
  if (error instanceof ModelError) return { type: 'error', data: { code: error.code, message: error.message } };
  if (error instanceof DomainError) return { type: 'error', data: { code: error.code, message: error.message } };
  return { type: 'error', data: { code: 'INTERNAL_ERROR', message: 'the answer could not be finished' } };
}

const INTERRUPTED = { code: 'INTERNAL_ERROR', message: 'the answer was interrupted before it was finished' };

export type AnswerStreams = ReturnType<typeof createAnswerStreams>;

/**
 * Answers produced apart from any HTTP connection, and followed by any number of clients from any
 * edge instance. A producer numbers the events of its answer, keeps them in this process's memory
 * for followers here, and stores them in PostgreSQL (in batches, each announced with NOTIFY) for
 * followers anywhere else or later; the final batch completes (or fails) the message and ends its
 * stream in one transaction, and followers here see the last event only once that committed. A
 * follower elsewhere reads the stored events and waits for announcements; it finds an answer whose
 * producer stopped renewing its lease (a process that ended midway), records it as failed with an
 * error event, and ends.
 */
export function createAnswerStreams(deps: { db: Db; settings?: AnswerStreamSettings }) {
  const { db } = deps;
  const leaseMs = deps.settings?.leaseMs ?? 30_000;
  const renewMs = deps.settings?.renewMs ?? Math.floor(leaseMs / 3);
  const pollMs = deps.settings?.pollMs ?? 2_000;
  const live = new Map<string, LiveAnswer>();
  const woken = new Map<string, Set<() => void>>();
  let listening: Promise<unknown> | undefined;

  const inScope = <T>(scope: AnswerScope, fn: (tx: Tx) => Promise<T>) =>
    db.inTenant(scope.tenantId, async (tx) => {
      await actAsUser(tx, scope.userId);
      return fn(tx);
    });

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

  async function* followLive(answer: LiveAnswer, after: number, signal?: AbortSignal): AsyncGenerator<NumberedEvent> {
    let next = 0;
    for (;;) {
      while (next < answer.events.length) {
        const numbered = answer.events[next++]!;
        if (numbered.id > after) yield numbered;
        if (isTerminal(numbered.event)) return;
      }
      if (signal?.aborted) return;
      await Promise.race([answer.changed(), abortedBy(signal)]);
    }
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

  return {
    produce,

    /**
     * The answer's events after event `after`, as they come, until its last one (`done` or
     * `error`) or until `signal` aborts. From memory when this process produces it, else from
     * the stored events.
     */
    follow(scope: AnswerScope, after: number, signal?: AbortSignal): AsyncGenerator<NumberedEvent> {
      const answer = live.get(scope.messageId);
      return answer ? followLive(answer, after, signal) : followStored(scope, after, signal);
    },

    /** Answers this process is producing now. */
    producing: () => live.size,
  };
}
