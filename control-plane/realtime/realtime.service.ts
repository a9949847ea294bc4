import { randomUUID } from 'node:crypto';
import type { CapabilitiesService } from '../capabilities/capabilities.service.ts';
import type { Db } from '../db/client.ts';
import { DomainError, type AppErrorBody } from '../errors.ts';
import type { Actor } from '../identity/identity.schema.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import { realtimeAccessCheck } from './access-check.ts';
import { createAccessWatch } from './realtime-access.ts';
import { createRealtimeHub, type HubOptions, type RealtimeHub } from './realtime-hub.ts';
import { createRealtimeTokens, type KeyPolicy } from './realtime-tokens.ts';
import { connectionsElsewhere, ensureStream, freshReports, streamHead, type LoggedEvent } from './realtime.repo.ts';
import type { Alerts, NegotiateInput, Negotiation, RealtimeEvent, RotateSigningKeysInput, RotatedSigningKeys, StreamInput, StreamMessage } from './realtime.schema.ts';

/** How long a negotiated token can open its one connection. */
export const TOKEN_TTL_SECONDS = 60;
/** How often the users of open connections are checked for the membership, permission and capability they connected with. */
export const ACCESS_CHECK_MS = 3_000;
/** How long one connection lasts at most; it then ends with `expired` and the client negotiates again. */
export const CONNECTION_MAX_MS = 60 * 60 * 1000;
/** A comment line on an idle connection this often, so that proxies and the client know it is alive. */
export const HEARTBEAT_MS = 15_000;
/** An instance's report older than this is of an instance that has stopped. */
const FRESH_REPORT_SECONDS = 30;
const LAG_ALERT_MS = 5_000;
const LAG_ALERT_EVENTS = 1_000;
const DROPPED_ALERT_MS = 60 * 60 * 1000;

/** The tenant's plan allows no more connections at a time. */
class ConnectionLimitError extends DomainError {
  constructor(max: number) {
    super('RATE_LIMIT_EXCEEDED', `capability realtime allows ${max} connections at a time for this tenant; close one or try again later`, { limit: max });
  }

  override toBody(): AppErrorBody {
    return { ...super.toBody(), retryAfter: 30 };
  }
}

/** Whether an event is on one of the channels (`resources`, `resources:<type>`, `resources:<type>:<id>`). */
export function channelFilter(channels: readonly string[]): (event: Pick<LoggedEvent, 'type' | 'id'>) => boolean {
  const rules = channels.map((channel) => channel.split(':').slice(1));
  return (event) => rules.some(([type, id]) => (type === undefined || type === event.type) && (id === undefined || id.toLowerCase() === event.id));
}

const toEvent = (logged: LoggedEvent): RealtimeEvent => ({
  eventId: String(logged.seq),
  event: logged.kind,
  type: logged.type,
  id: logged.id,
  version: logged.version,
  ...(logged.action ? { action: logged.action } : {}),
  at: logged.at,
});

/**
 * Realtime resource change events. A member who may read the tenant's resources negotiates a
 * short-lived, one-time token for some channels; the connection opened with it (the edge serves
 * it as server-sent events) gets the tenant's events on those channels as they commit, through
 * this instance's hub, and can resume after the last event it saw while the log still holds it.
 * It lasts while its user keeps that membership and permission, and the tenant the `realtime`
 * capability (checked every few seconds).
 * Negotiating starts the recording of the tenant's changes. Both steps need the `realtime`
 * capability; a connection is refused past the plan's `maxConnections`.
 */
export function createRealtimeService(deps: {
  db: Db;
  capabilities: Pick<CapabilitiesService, 'require' | 'refusing'>;
  identity: Pick<IdentityService, 'holding'>;
  /** Seals the signing keys at rest (the operator key); processes that serve no connections need none. */
  secrets?: SecretBox;
  hub?: HubOptions;
  /** How often open connections' access is checked; default `ACCESS_CHECK_MS`. */
  accessCheckMs?: number;
  keys?: Partial<KeyPolicy>;
  log?: (message: string, error: unknown) => void;
}) {
  const { db } = deps;
  const tokens = createRealtimeTokens(deps);
  const access = createAccessWatch({
    revoked: realtimeAccessCheck(deps),
    intervalMs: deps.accessCheckMs ?? ACCESS_CHECK_MS,
    log: deps.log,
  });
  let hub: RealtimeHub | undefined;
  const hubOf = () => (hub ??= createRealtimeHub({ db, ...deps.hub }));

  async function assertBelowLimit(tenantId: string, limit: number | undefined): Promise<void> {
    if (limit === undefined) return;
    const here = hubOf().connections(tenantId);
    const elsewhere = await connectionsElsewhere(db.sql, hubOf().instanceId, tenantId, FRESH_REPORT_SECONDS);
    if (here + elsewhere >= limit) throw new ConnectionLimitError(limit);
  }

  return {
    async negotiate(actor: Actor, input: NegotiateInput): Promise<Negotiation> {
      await deps.capabilities.require(actor.tenantId, 'realtime');
      await ensureStream(db.sql, actor.tenantId);
      const { token, expiresAt } = await tokens.issue({ tenantId: actor.tenantId, userId: actor.userId, channels: input.channels }, TOKEN_TTL_SECONDS);
      return { tenantId: actor.tenantId, channels: input.channels, token, expiresAt: expiresAt.toISOString() };
    },

    /**
     * A connection: `ready` at once, then the events of its channels (after `lastEventId` when it
     * resumes), `reset` when some are no longer in the log, heartbeats while idle, `revoked` when
     * its user loses the membership or permission, and `expired` after an hour. 401 for a bad,
     * expired or already used token, 403 for a user no longer allowed or without the capability,
     * 429 past the limit (a refused token is not used up).
     */
    async *stream(input: StreamInput, signal?: AbortSignal): AsyncGenerator<StreamMessage, void> {
      const grant = await tokens.verify(input.token);
      await access.assert(grant);
      const decision = await deps.capabilities.require(grant.tenantId, 'realtime');
      await assertBelowLimit(grant.tenantId, decision.limits.maxConnections);
      await tokens.consume(grant);
      const connection = await hubOf().open(grant.tenantId, {
        matches: channelFilter(grant.channels),
        afterSeq: input.lastEventId === undefined ? undefined : Number(input.lastEventId),
      });
      const expiry = new AbortController();
      const expires = setTimeout(() => expiry.abort(), CONNECTION_MAX_MS);
      const revocation = new AbortController();
      const unwatch = access.watch(grant, (reason) => revocation.abort(reason));
      const ended = AbortSignal.any([expiry.signal, revocation.signal, ...(signal ? [signal] : [])]);
      try {
        yield {
          type: 'ready',
          connectionId: randomUUID(),
          tenantId: grant.tenantId,
          channels: grant.channels,
          lastEventId: String(connection.startsAfter),
          resumed: input.lastEventId !== undefined,
          expiresAt: new Date(Date.now() + CONNECTION_MAX_MS).toISOString(),
        };
        for await (const message of connection.messages(ended, HEARTBEAT_MS)) {
          if (message.type === 'event') yield { type: 'event', event: toEvent(message.event) };
          else if (message.type === 'reset') yield { type: 'reset', after: String(message.after), resumedAt: String(message.resumedAt), dropped: message.dropped };
          else yield message;
        }
        if (signal?.aborted) return;
        if (revocation.signal.aborted) yield { type: 'revoked', reason: String(revocation.signal.reason) };
        else if (expiry.signal.aborted) yield { type: 'expired', reason: 'the connection reached its maximum duration: negotiate again and resume' };
      } finally {
        unwatch();
        clearTimeout(expires);
        await connection.close();
      }
    },

    /**
     * A new key signs connection tokens from now on; the keys before it verify tokens for the
     * overlap, or no more with `retirePrevious` (a key that may have leaked). Platform operators.
     */
    async rotateSigningKeys(input: RotateSigningKeysInput): Promise<RotatedSigningKeys> {
      const { current, verifying } = await tokens.rotate({ retirePrevious: input.retirePrevious });
      return { kid: String(current.id), createdAt: current.createdAt, verifying: verifying.map((k) => ({ kid: String(k.id), retiresAt: k.retiresAt })) };
    },

    /** Seals the stored signing keys that are plain or under a previous operator key; run when the control plane starts. */
    resealStoredKeys: () => tokens.resealStoredKeys(),

    /** Delivery diagnostics of the tenant's events across every instance, with what needs attention. */
    async alerts(actor: Actor): Promise<Alerts> {
      const { head, reports } = await db.inTenant(actor.tenantId, async (tx) => ({ head: await streamHead(tx), reports: await freshReports(tx, FRESH_REPORT_SECONDS) }));
      const serving = reports.filter((r) => r.connections > 0);
      const lastSeq = head?.lastSeq ?? 0;
      const lagEvents = serving.reduce((most, r) => Math.max(most, lastSeq - r.readSeq + r.queued), 0);
      const lagMs = serving.reduce((most, r) => Math.max(most, r.lagMs), 0);
      const alerts: Alerts['alerts'] = [];
      if (lagMs > LAG_ALERT_MS || lagEvents > LAG_ALERT_EVENTS) {
        alerts.push({ code: 'DELIVERY_LAG', severity: 'warning', message: `connections are ${lagEvents} events and up to ${lagMs} ms behind the tenant's changes` });
      }
      if (head?.lastDroppedAt && Date.now() - Date.parse(head.lastDroppedAt) < DROPPED_ALERT_MS) {
        alerts.push({ code: 'EVENTS_DROPPED', severity: 'warning', message: `connections resumed after events the log no longer held (${head.dropped} in all); raise the retention or resume sooner` });
      }
      const deaf = serving.filter((r) => !r.listening).length;
      if (deaf > 0) {
        alerts.push({ code: 'LISTENER_DOWN', severity: 'critical', message: `${deaf} instance(s) receive no database notifications; their connections get events only by polling` });
      }
      return {
        tenantId: actor.tenantId,
        recording: head !== undefined,
        lastEventId: head && head.lastSeq > 0 ? String(head.lastSeq) : null,
        oldestEventId: head?.oldestSeq ? String(head.oldestSeq) : null,
        retention: head?.retain ?? 0,
        connections: serving.reduce((sum, r) => sum + r.connections, 0),
        instances: serving.length,
        lag: { events: lagEvents, ms: lagMs, catchingUp: serving.reduce((sum, r) => sum + r.catchingUp, 0) },
        dropped: { events: head?.dropped ?? 0, lastAt: head?.lastDroppedAt ?? null },
        alerts,
        at: new Date().toISOString(),
      };
    },
  };
}

export type RealtimeService = ReturnType<typeof createRealtimeService>;
