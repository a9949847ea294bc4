import { randomUUID } from 'node:crypto';
import type { Db } from '../db/client.ts';
import { countDropped, eventsAfter, lastSeqs, report, type DeliveryReport, type LoggedEvent } from './realtime.repo.ts';

/** The channel the database announces a tenant's new events on, with the tenant's id (migration 0021). */
export const REALTIME_CHANNEL = 'realtime_events';

/** What a connection of the hub yields; the service adds `ready` and `expired`. */
export type HubMessage = { type: 'event'; event: LoggedEvent } | { type: 'reset'; after: number; resumedAt: number; dropped: number } | { type: 'heartbeat' };

export interface HubOptions {
  /** How often the hub asks the database for tenants' newest events, in case a notification was lost. */
  pollMs?: number;
  /** How often it reports its connections (`realtime_deliveries`), for the alerts of every instance. */
  reportMs?: number;
  /** Events waiting for a slow connection before it is left to read the log on its own. */
  queueLimit?: number;
  /** Events read from the log at a time. */
  pageSize?: number;
  log?: (message: string, error: unknown) => void;
}

interface Subscriber {
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
interface Feed {
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
 * Delivers tenants' resource change events to the connections this control-plane instance holds.
 * It listens on the database's notification channel (every instance does, so a change made
 * through any instance reaches connections on all of them), reads each tenant's new events once
 * from the tenant's log under its row-level security, and hands them to that tenant's
 * connections. A connection that resumes, or falls more than `queueLimit` events behind, reads
 * the log itself from where it is until it has caught up, so a slow reader never holds the others
 * back and loses nothing the log still holds. The hub listens only while it has connections.
 */
export function createRealtimeHub(deps: { db: Db } & HubOptions) {
  const { db } = deps;
  const pollMs = deps.pollMs ?? 1_000;
  const reportMs = deps.reportMs ?? 5_000;
  const queueLimit = deps.queueLimit ?? 1_000;
  const pageSize = deps.pageSize ?? 500;
  const log = deps.log ?? (() => {});
  const instanceId = randomUUID();
  const feeds = new Map<string, Feed>();
  let listener: Promise<{ unlisten(): Promise<void> }> | undefined;
  /** False once the poll found events that no notification announced. */
  let notificationsArrive = true;
  let timer: NodeJS.Timeout | undefined;
  let lastReport = 0;

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

  function ensureListening(): Promise<unknown> {
    listener ??= db.sql
      .listen(
        REALTIME_CHANNEL,
        (tenantId) => {
          notificationsArrive = true;
          const feed = feeds.get(tenantId);
          if (!feed) return;
          feed.unannounced = false;
          pump(feed);
        },
        // Also after each reconnect: what was announced meanwhile is read now.
        () => {
          for (const feed of feeds.values()) pump(feed);
        },
      )
      .catch((error: unknown) => {
        listener = undefined;
        throw error;
      });
    return listener;
  }

  async function poll(): Promise<void> {
    const tenantIds = [...feeds.keys()];
    if (tenantIds.length === 0) return;
    const heads = await lastSeqs(db.sql, tenantIds);
    for (const feed of feeds.values()) {
      const head = heads.get(feed.tenantId) ?? 0;
      if (head <= feed.cursor) {
        feed.unannounced = false;
        continue;
      }
      if (feed.reading) continue;
      // Unread events at two polls in a row, with no notification of the tenant between: notifications are not arriving.
      if (feed.unannounced) notificationsArrive = false;
      feed.unannounced = true;
      pump(feed);
    }
    if (Date.now() - lastReport >= reportMs) await publishReport();
  }

  async function publishReport(): Promise<void> {
    lastReport = Date.now();
    const reports: DeliveryReport[] = [...feeds.values()].map((feed) => {
      const subscribers = [...feed.subscribers];
      const row = {
        tenantId: feed.tenantId,
        connections: subscribers.length,
        catchingUp: subscribers.filter((s) => !s.live || s.overflowed).length,
        readSeq: feed.cursor,
        queued: subscribers.reduce((sum, s) => sum + s.queue.length, 0),
        lagMs: feed.lagMs,
        listening: notificationsArrive,
      };
      feed.lagMs = 0;
      return row;
    });
    await report(db.sql, instanceId, reports);
  }

  function startTimer(): void {
    timer ??= setInterval(() => void poll().catch((error: unknown) => log('realtime: polling the event log failed', error)), pollMs);
    timer.unref();
  }

  async function release(feed: Feed, subscriber: Subscriber): Promise<void> {
    feed.subscribers.delete(subscriber);
    // Reported at the next poll rather than in five seconds: connections are counted across instances.
    lastReport = 0;
    if (feed.subscribers.size > 0 || feeds.get(feed.tenantId) !== feed) return;
    feeds.delete(feed.tenantId);
    if (feeds.size > 0) return;
    clearInterval(timer);
    timer = undefined;
    const listening = listener;
    listener = undefined;
    await listening?.then((l) => l.unlisten()).catch(() => undefined);
    await report(db.sql, instanceId, []).catch(() => undefined);
  }

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

  return {
    instanceId,

    /** Connections of the tenant that this instance holds. */
    connections: (tenantId: string) => feeds.get(tenantId)?.subscribers.size ?? 0,

    /**
     * A connection to the tenant's events that `matches`: after event `afterSeq` when given (a
     * resume; an id beyond the newest event resumes from the newest), else from now. Its messages
     * are events, a `reset` when events it should have had are no longer in the log, and a
     * `heartbeat` after `heartbeatMs` without one. `close` (or leaving the loop) releases it.
     */
    async open(tenantId: string, options: { matches(event: LoggedEvent): boolean; afterSeq?: number }) {
      await ensureListening();
      let feed = feeds.get(tenantId);
      if (!feed) {
        const created: Feed = { tenantId, cursor: 0, ready: Promise.resolve(), subscribers: new Set(), reading: false, again: false, lagMs: 0, unannounced: false };
        // Read once the channel is listened to, so that no event falls between the two.
        created.ready = lastSeqs(db.sql, [tenantId]).then((heads) => void (created.cursor = heads.get(tenantId) ?? 0));
        feeds.set(tenantId, (feed = created));
        startTimer();
      }
      const subscriber: Subscriber = { matches: options.matches, queue: [], live: false, overflowed: false, after: 0, wake: () => {} };
      feed.subscribers.add(subscriber);
      lastReport = 0;
      const own = feed;
      try {
        await own.ready;
      } catch (error) {
        await release(own, subscriber);
        throw error;
      }
      let cursor = options.afterSeq === undefined || options.afterSeq > own.cursor ? own.cursor : options.afterSeq;

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
              if (options.matches(event)) yield { type: 'event', event };
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
        close: () => release(own, subscriber),
      };
    },
  };
}

export type RealtimeHub = ReturnType<typeof createRealtimeHub>;
