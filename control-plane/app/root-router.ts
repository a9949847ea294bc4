import { appsRouter } from '../apps/apps.router.ts';
import { capabilitiesRouter } from '../capabilities/capabilities.router.ts';
import { chatRouter } from '../chat/chat.router.ts';
import { configStoreRouter } from '../config-store/config-store.router.ts';
import { geoRouter } from '../geo/geo.router.ts';
import { documentsRouter } from '../documents/documents.router.ts';
import { healthRouter } from '../health/health.router.ts';
import { idpAppsRouter } from '../idp-apps/idp-apps.router.ts';
import { identityRouter } from '../identity/identity.router.ts';
import { objectTypesRouter } from '../object-types/object-types.router.ts';
import { orchestrateRouter } from '../orchestrate/orchestrate.router.ts';
import { realtimeRouter } from '../realtime/realtime.router.ts';
import { resourcesRouter } from '../resources/resources.router.ts';
import { searchRouter } from '../search/search.router.ts';
import { runtimeRouter } from '../runtime/runtime.router.ts';
import { sessionsRouter } from '../sessions/sessions.router.ts';
import { storageRouter } from '../storage/storage.router.ts';
import { callerTenantsRouter, tenantsRouter } from '../tenants/tenants.router.ts';
import { uploadsRouter } from '../uploads/uploads.router.ts';
import { usersRouter } from '../users/users.router.ts';
import { verticalsRouter } from '../verticals/verticals.router.ts';
import { webhooksRouter } from '../webhooks/webhooks.router.ts';
import { t } from '../trpc/init.ts';

export const appRouter = t.router({
  objectTypes: objectTypesRouter,
  resources: resourcesRouter,
  users: usersRouter,
  sessions: sessionsRouter,
  orchestrate: orchestrateRouter,
  storage: storageRouter,
  identity: t.mergeRouters(identityRouter, callerTenantsRouter),
  tenants: tenantsRouter,
  apps: appsRouter,
  capabilities: capabilitiesRouter,
  health: healthRouter,
  uploads: uploadsRouter,
  realtime: realtimeRouter,
  webhooks: webhooksRouter,
  chat: chatRouter,
  runtime: runtimeRouter,
  geo: geoRouter,
  idpApps: idpAppsRouter,
  verticals: verticalsRouter,
  search: searchRouter,
  documents: documentsRouter,
  configStore: configStoreRouter,
});

export type AppRouter = typeof appRouter;
