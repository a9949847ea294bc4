import type { Route } from '../route.ts';

/** The browser-facing REST API v3 under `/api/svc/v3`, each area in its own module. */
export const V3_ROUTES: readonly Route[] = [];
