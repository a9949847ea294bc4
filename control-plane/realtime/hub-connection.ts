import type { Db } from '../db/client.ts';
import { countDropped, eventsAfter, type LoggedEvent } from './realtime.repo.ts';
import type { Feed, Subscriber } from './tenant-feeds.ts';

/** What a connection of the hub yields; the service adds `ready` and `expired`. */
export type HubMessage = { type: 'event'; event: LoggedEvent } | { type: 'reset'; after: number; resumedAt: number; dropped: number } | { type: 'heartbeat' };

/** Waits for the subscriber's next event, at most `ms`, or until `signal` aborts. */
function waitFor(subscriber: Subscriber, ms: number, signal: AbortSignal): Promise<'woken' | 'timeout'> {
  return new Promise((resolve) => {
    const done = (outcome: 'woken' | 'timeout') => {
      clearTimeout(timeout);
      signal.removeEventListener('abort', onAbort);
      subscriber.wake = () => {};
      resolve(outcome);
    };
    const onAbort = () => done('woken');
    const timeout = setTimeout(() => done('timeout'), Math.max(0, ms));
    subscriber.wake = () => done('woken');
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The messages of one connection to the tenant's feed, starting after event `after`: events the
 * hub fed it while it is live, else read from the log by itself (when it resumes, or fell too far
 * behind) until it has caught up, with a `reset` for events the log no longer holds.
 */
export function createHubConnection(deps: {
  db: Db;
  pageSize: number;
  log: (message: string, error: unknown) => void;
  tenantId: string;
  feed: Feed;
  subscriber: Subscriber;
  matches(event: LoggedEvent): boolean;
  after: number;
}) {
  const { db, pageSize, log, tenantId, subscriber, matches } = deps;
  const own = deps.feed;
  let cursor = deps.after;

  async function* messages(signal: AbortSignal, heartbeatMs: number): AsyncGenerator<HubMessage, void> {
    while (!signal.aborted) {
      if (subscriber.overflowed) {
        subscriber.overflowed = false;
        subscriber.live = false;
        subscriber.queue.length = 0;
      }
      if (!subscriber.live) {
        if (cursor >= own.cursor) {
          subscriber.live = true;
          subscriber.after = cursor;
          continue;
        }
        const page = await db.readInTenant(tenantId, (tx) => eventsAfter(tx, cursor, pageSize));
        const resumedAt = page.length ? page[0]!.seq - 1 : own.cursor;
        if (resumedAt > cursor) {
          const dropped = resumedAt - cursor;
          await countDropped(db.sql, tenantId, dropped).catch((error: unknown) => log('realtime: counting dropped events failed', error));
          yield { type: 'reset', after: cursor, resumedAt, dropped };
          cursor = resumedAt;
        }
        for (const event of page) {
          cursor = event.seq;
          if (matches(event)) yield { type: 'event', event };
          if (signal.aborted || subscriber.overflowed) break;
        }
        continue;
      }
      const next = subscriber.queue.shift();
      if (next) {
        cursor = next.seq;
        yield { type: 'event', event: next };
        continue;
      }
      if ((await waitFor(subscriber, heartbeatMs, signal)) === 'timeout') yield { type: 'heartbeat' };
    }
  }

  return {
    /** Where the connection starts: the event it resumes after, or the newest when it opened. */
    startsAfter: cursor,
    messages,
  };
}
