import type { Db } from '../db/client.ts';
import { lastSeqs, report, type DeliveryReport } from './realtime.repo.ts';
import type { Feed, FeedPump } from './tenant-feeds.ts';

/** The channel the database announces a tenant's new events on, with the tenant's id (migration 0021). */
export const REALTIME_CHANNEL = 'realtime_events';

/**
 * How the hub learns of tenants' new events: it listens on the database's notification channel
 * (every instance does, so a change made through any instance reaches connections on all of them)
 * and polls the tenants' newest events every `pollMs` in case a notification was lost. The poll
 * also reports this instance's connections (`realtime_deliveries`) every `reportMs`, for the
 * alerts of every instance.
 */
export function createEventWatch(deps: {
  db: Db;
  feeds: Map<string, Feed>;
  pump: FeedPump;
  instanceId: string;
  pollMs: number;
  reportMs: number;
  log: (message: string, error: unknown) => void;
}) {
  const { db, feeds, pump, instanceId, pollMs, reportMs, log } = deps;
  let listener: Promise<{ unlisten(): Promise<void> }> | undefined;
  /** False once the poll found events that no notification announced. */
  let notificationsArrive = true;
  let timer: NodeJS.Timeout | undefined;
  let lastReport = 0;

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

  return {
    ensureListening,
    startTimer,

    /** Reports at the next poll rather than in `reportMs`: connections are counted across instances. */
    reportSoon(): void {
      lastReport = 0;
    },

    /** Stops listening and polling, and withdraws this instance's report: for when it holds no connection. */
    async stop(): Promise<void> {
      clearInterval(timer);
      timer = undefined;
      const listening = listener;
      listener = undefined;
      await listening?.then((l) => l.unlisten()).catch(() => undefined);
      await report(db.sql, instanceId, []).catch(() => undefined);
    },
  };
}
