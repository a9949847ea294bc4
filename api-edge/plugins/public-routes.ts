import { RESERVED_WEBHOOK_SEGMENTS } from '../../control-plane/contracts.ts';
import { V4_BASE } from '../routes/bases.ts';

/**
 * API routes that outside callers reach without a bearer token of the identity provider: an
 * inbound webhook delivery (`POST /v4/webhooks/{tenantId}/{source}`), authenticated by its
 * signature, and a realtime connection (`GET /v4/realtime/connect`), by its negotiated token.
 * The procedures they call check those; the edge neither authenticates them nor reads their body.
 */
export type PublicRoute = 'webhook-delivery' | 'realtime-connect';

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const WEBHOOK_DELIVERY = new RegExp(`^${escape(V4_BASE)}/webhooks/([^/]+)/(?!(?:${RESERVED_WEBHOOK_SEGMENTS.join('|')})/?$)([^/]+)/?$`);
const REALTIME_CONNECT = new RegExp(`^${escape(V4_BASE)}/realtime/connect/?$`);

export function publicRouteOf(method: string, pathname: string): PublicRoute | undefined {
  if (method === 'POST' && WEBHOOK_DELIVERY.test(pathname)) return 'webhook-delivery';
  if (method === 'GET' && REALTIME_CONNECT.test(pathname)) return 'realtime-connect';
  return undefined;
}

/** The tenant (id or slug, as written) and source that a delivery's path names, decoded; undefined for another path or a malformed escape. */
export function webhookDeliveryOf(pathname: string): { tenantId: string; source: string } | undefined {
  const match = WEBHOOK_DELIVERY.exec(pathname);
  if (!match) return undefined;
  try {
    return { tenantId: decodeURIComponent(match[1]!), source: decodeURIComponent(match[2]!) };
  } catch {
    return undefined;
  }
}
