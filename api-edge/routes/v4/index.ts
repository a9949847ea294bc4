import type { Route } from '../route.ts';
import { v4AiChatRoutes } from './ai-chat.ts';
import { v4DocumentRoutes } from './data-documents.ts';
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
import { v4ConfigRoutes } from './platform-config.ts';
import { v4IdpAppRoutes } from './platform-idp-apps.ts';
import { v4PlatformRoutes } from './platform.ts';
import { v4RealtimeRoutes } from './realtime.ts';
import { v4VerticalRoutes } from './verticals.ts';
import { v4WebhookRoutes } from './webhooks.ts';
import { v4WorkflowRoutes } from './workflows.ts';

/**
 * The v4 platform API under `/v4`, each area in its own module. A route that names a tenant in its
 * path passes it with `call(params.tenantId)`. Errors use the v3 body (`{error: {code, message, details?}}`).
 */
export const V4_ROUTES: readonly Route[] = [
  ...v4IdentityRoutes,
  ...v4PlatformRoutes,
  ...v4CapabilityRoutes,
  ...v4StorageRoutes,
  ...v4ObjectTypeRoutes,
  ...v4ResourceQueryRoutes,
  ...v4ResourceSearchRoutes,
  ...v4ResourceRoutes,
  ...v4ResourceFileRoutes,
  ...v4ResourceBatchRoutes,
  ...v4RealtimeRoutes,
  ...v4WebhookRoutes,
  ...v4GeoRoutes,
  ...v4IdpAppRoutes,
  ...v4ConfigRoutes,
  ...v4VerticalRoutes,
  ...v4DocumentRoutes,
  ...v4AiChatRoutes,
  ...v4WorkflowRoutes,
  ...v4IntegrationRoutes,
];
