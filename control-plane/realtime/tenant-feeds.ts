import type { Db } from '../db/client.ts';
import { eventsAfter, type LoggedEvent } from './realtime.repo.ts';

/** One connection as the hub feeds it. */
export interface Subscriber {
  matches(event: LoggedEvent): boolean;
  /** Events the hub read for it and it has not yielded yet. */
  queue: LoggedEvent[];
  /** Fed by the hub (true), or reading the log itself (resuming, or after it fell too far behind). */
  live: boolean;
  overflowed: boolean;
  /** The hub feeds it only events after this one. */
  after: number;
  wake(): void;
}

/** One tenant's events as this instance reads them: once for all of the tenant's connections here. */
export interface Feed {
  tenantId: string;
  /** The newest event read from the log. */
  cursor: number;
  ready: Promise<void>;
  subscribers: Set<Subscriber>;
  reading: boolean;
  again: boolean;
  /** The oldest event's age when read, since the last report. */
  lagMs: number;
  /** Whether the last poll found events no notification had announced. */
  unannounced: boolean;
}

/**
 * Reads a tenant's new events from its log under its row-level security and hands them to the
 * tenant's live connections; a connection more than `queueLimit` events behind is marked to read
 * the log on its own.
 */
export function createFeedPump(deps: { db: Db; queueLimit: number; pageSize: number; log: (message: string, error: unknown) => void }) {
  const { db, queueLimit, pageSize, log } = deps;

  function offer(subscriber: Subscriber, event: LoggedEvent): void {
    if (!subscriber.live || subscriber.overflowed || event.seq <= subscriber.after || !subscriber.matches(event)) return;
    if (subscriber.queue.length >= queueLimit) {
      subscriber.overflowed = true;
      subscriber.queue.length = 0;
    } else {
      subscriber.queue.push(event);
    }
    subscriber.wake();
  }

  /** Reads the feed's new events and hands them out; a call while it reads makes it read again after. */
  function pump(feed: Feed): void {
    if (feed.reading) {
      feed.again = true;
      return;
    }
    feed.reading = true;
    void (async () => {
      try {
        do {
          feed.again = false;
          for (;;) {
            const rows = await db.readInTenant(feed.tenantId, (tx) => eventsAfter(tx, feed.cursor, pageSize));
            // The log pruned events this instance had not read: its connections find out for themselves.
            if (rows.length && rows[0]!.seq > feed.cursor + 1) {
              for (const subscriber of feed.subscribers) {
                if (!subscriber.live) continue;
                subscriber.overflowed = true;
                subscriber.wake();
              }
            }
            for (const event of rows) {
              feed.cursor = event.seq;
              feed.lagMs = Math.max(feed.lagMs, event.ageMs);
              for (const subscriber of feed.subscribers) offer(subscriber, event);
            }
            if (rows.length < pageSize) break;
          }
        } while (feed.again);
      } catch (error) {
        log(`realtime: reading the events of tenant ${feed.tenantId} failed`, error);
      } finally {
        feed.reading = false;
      }
    })();
  }

  return pump;
}

export type FeedPump = ReturnType<typeof createFeedPump>;
