import type { Db } from '../db/client.ts';
import { createAnswerProducer } from './answer-producer.ts';
import type { AnswerScope } from './answer-scope.ts';
import type { NumberedEvent } from './chat.schema.ts';
import { followLive, type LiveAnswer } from './live-answer.ts';
import { createStoredAnswers } from './stored-answers.ts';

export interface AnswerStreamSettings {
  /** How long an answer's stream counts without its producer renewing it. Default 30 s. */
  leaseMs?: number;
  /** How often a producer renews its lease. Default a third of the lease. */
  renewMs?: number;
  /** How often a follower in another process looks again without being woken. Default 2 s. */
  pollMs?: number;
}

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
  const stored = createStoredAnswers({ db, pollMs });

  return {
    /**
     * Produces an answer from `source` in the background and returns at once. `abort` stops the
     * source when the answer can no longer be stored (its conversation was deleted).
     */
    produce: createAnswerProducer({ db, live, leaseMs, renewMs }),

    /**
     * The answer's events after event `after`, as they come, until its last one (`done` or
     * `error`) or until `signal` aborts. From memory when this process produces it, else from
     * the stored events.
     */
    follow(scope: AnswerScope, after: number, signal?: AbortSignal): AsyncGenerator<NumberedEvent> {
      const answer = live.get(scope.messageId);
      return answer ? followLive(answer, after, signal) : stored.follow(scope, after, signal);
    },

    /** Answers this process is producing now. */
    producing: () => live.size,
  };
}
