import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { mountRoutes, type Route } from '../route.ts';
import { v4DocumentRoutes } from './data-documents.ts';
import { v4AiChatRoutes } from './ai-chat.ts';
import { v4ObjectTypeRoutes } from './data-object-types.ts';
import { v4ResourceBatchRoutes } from './data-resource-batches.ts';
import { v4ResourceFileRoutes } from './data-resource-files.ts';
import { v4ResourceQueryRoutes } from './data-resource-queries.ts';
import { v4ResourceSearchRoutes } from './data-resource-search.ts';
import { v4ResourceRoutes } from './data-resources.ts';
import { v4StorageRoutes } from './data-storage.ts';
import { v4GeoRoutes } from './geo.ts';
import { v4IdentityRoutes } from './identity.ts';
import { v4IntegrationRoutes } from './integrations.ts';
import { v4CapabilityRoutes } from './platform-capabilities.ts';
import { v4PlatformRoutes } from './platform.ts';
import { v4IdpAppRoutes } from './platform-idp-apps.ts';
import { v4VerticalRoutes } from './verticals.ts';
import { v4WorkflowRoutes } from './workflows.ts';
import { v4RealtimeRoutes } from './realtime.ts';
import { v4WebhookRoutes } from './webhooks.ts';

/**
 * The v4 platform API under `/v4`. Each area is its own module (`identity.ts`, `platform.ts`,
 * `data-storage.ts`, `data-object-types.ts`, `data-resource-queries.ts`, `data-resource-search.ts`, `data-resources.ts`, `data-resource-files.ts`, `data-resource-batches.ts`, `realtime.ts`, `webhooks.ts`, `geo.ts`, `platform-idp-apps.ts`, `verticals.ts`, `data-documents.ts`, `ai-chat.ts`, `workflows.ts`, `integrations.ts`) mounted here; a route that names a tenant in its path passes it with
 * `calls.of(request, params.tenantId)`. Errors use the v3 body (`{error: {code, message, details?}}`).
 */
export const V4_ROUTES: readonly Route[] = [...v4ResourceBatchRoutes];

export function v4Routes(cp: ControlPlane, calls: RequestCalls, options: { sseHeartbeatMs?: number } = {}) {
  return new Elysia({ name: 'v4', prefix: '/v4' })
    .use(v4IdentityRoutes(cp, calls))
    .use(v4PlatformRoutes(cp, calls))
    .use(v4CapabilityRoutes(cp, calls))
    .use(v4StorageRoutes(cp, calls))
    .use(v4ObjectTypeRoutes(cp, calls))
    .use(v4ResourceQueryRoutes(cp, calls))
    .use(v4ResourceSearchRoutes(cp, calls))
    .use(v4ResourceRoutes(cp, calls))
    .use(v4ResourceFileRoutes(cp, calls))
    .use(declared(cp, calls, options))
    .use(v4RealtimeRoutes(cp, calls))
    .use(v4WebhookRoutes(cp, calls))
    .use(v4GeoRoutes(cp, calls))
    .use(v4IdpAppRoutes(cp, calls))
    .use(v4VerticalRoutes(cp, calls))
    .use(v4DocumentRoutes(cp, calls))
    .use(v4AiChatRoutes(cp, calls, { heartbeatMs: options.sseHeartbeatMs }))
    .use(v4WorkflowRoutes(cp, calls))
    .use(v4IntegrationRoutes(cp, calls));
}

function declared(cp: ControlPlane, calls: RequestCalls, options: { sseHeartbeatMs?: number }) {
  const app = new Elysia({ name: 'v4-declared' });
  mountRoutes(app, V4_ROUTES, { controlPlane: cp, calls, options });
  return app;
}
