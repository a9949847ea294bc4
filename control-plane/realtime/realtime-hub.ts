import { randomUUID } from 'node:crypto';
import type { Db } from '../db/client.ts';
import { createEventWatch } from './event-watch.ts';
import { createHubConnection } from './hub-connection.ts';
import { lastSeqs, type LoggedEvent } from './realtime.repo.ts';
import { createFeedPump, type Feed, type Subscriber } from './tenant-feeds.ts';

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

/**
 * Delivers tenants' resource change events to the connections this control-plane instance holds.
 * It listens on the database's notification channel (every instance does, so a change made
 * through any instance reaches connections on all of them), reads each tenant's new events once
 * from the tenant's log under its row-level security, and hands them to that tenant's
 * connections. A connection that resumes, or falls more than `queueLimit` events behind, reads
 * the log itself from where it is until it has caught up, so a slow reader never holds the others
 * back and loses nothing the log still holds. The hub listens only while it has connections.
 *
 * Its parts: tenant-feeds.ts reads and hands out each tenant's events, event-watch.ts learns of
 * them (notifications, the poll) and reports the connections, hub-connection.ts is what one
 * connection yields.
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
  const pump = createFeedPump({ db, queueLimit, pageSize, log });
  const watch = createEventWatch({ db, feeds, pump, instanceId, pollMs, reportMs, log });

  async function release(feed: Feed, subscriber: Subscriber): Promise<void> {
    feed.subscribers.delete(subscriber);
    // Reported at the next poll rather than in five seconds: connections are counted across instances.
    watch.reportSoon();
    if (feed.subscribers.size > 0 || feeds.get(feed.tenantId) !== feed) return;
    feeds.delete(feed.tenantId);
    if (feeds.size > 0) return;
    await watch.stop();
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
      await watch.ensureListening();
      let feed = feeds.get(tenantId);
      if (!feed) {
        const created: Feed = { tenantId, cursor: 0, ready: Promise.resolve(), subscribers: new Set(), reading: false, again: false, lagMs: 0, unannounced: false };
        // Read once the channel is listened to, so that no event falls between the two.
        created.ready = lastSeqs(db.sql, [tenantId]).then((heads) => void (created.cursor = heads.get(tenantId) ?? 0));
        feeds.set(tenantId, (feed = created));
        watch.startTimer();
      }
      const subscriber: Subscriber = { matches: options.matches, queue: [], live: false, overflowed: false, after: 0, wake: () => {} };
      feed.subscribers.add(subscriber);
      watch.reportSoon();
      const own = feed;
      try {
        await own.ready;
      } catch (error) {
        await release(own, subscriber);
        throw error;
      }
      const after = options.afterSeq === undefined || options.afterSeq > own.cursor ? own.cursor : options.afterSeq;
      return {
        ...createHubConnection({ db, pageSize, log, tenantId, feed: own, subscriber, matches: options.matches, after }),
        close: () => release(own, subscriber),
      };
    },
  };
}

export type RealtimeHub = ReturnType<typeof createRealtimeHub>;
