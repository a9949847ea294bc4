import type { Route } from '../route.ts';
import { v3ChatRoutes } from './chat.ts';
import { v3DocumentRoutes } from './documents.ts';
import { v3OrchestrateRoutes } from './orchestrate.ts';
import { v3ResourceRoutes } from './resources.ts';
import { v3UserRoutes } from './users.ts';

/** The browser-facing REST API v3 under `/api/svc/v3`, each area in its own module. */
export const V3_ROUTES: readonly Route[] = [...v3ResourceRoutes, ...v3UserRoutes, ...v3OrchestrateRoutes, ...v3DocumentRoutes, ...v3ChatRoutes];
