import { BODY_METHODS } from '../plugins/body-limit.ts';
import type { RateLimitGroup } from '../plugins/rate-limit.ts';
import { routeOf } from './route-lookup.ts';

/**
 * What the edge decides about a request before it is routed, read from the declaration of the
 * route that will serve it (api-edge/routes/route-lookup.ts); public routes: public-routes.ts.
 */

/**
 * Whether the request's body is streamed to its procedure rather than a JSON document: its route
 * reads the body itself (`parse: 'none'`): a file, a document form, or an inbound webhook delivery,
 * whose exact bytes its signature covers and whose endpoint sets its limit.
 */
export function isStreamedUpload(request: Request): boolean {
  if (request.method !== 'POST') return false;
  return routeOf(request.method, new URL(request.url).pathname)?.declared.route.parse === 'none';
}

/** Whether the request sends a JSON body of undeclared length (chunked), which must be read to be measured. */
export function hasUnmeasuredBody(request: Request): boolean {
  return BODY_METHODS.has(request.method) && !request.headers.has('content-length') && request.headers.has('transfer-encoding') && !isStreamedUpload(request);
}

/**
 * The budget an authenticated request spends: its route's declared `rateLimit` (the resource
 * engine's routes `resources`, document uploads `uploads`), else, as for a request no route
 * serves (404, 405), the budget every other API shares.
 */
export function rateLimitGroupOf(method: string, pathname: string): RateLimitGroup {
  return routeOf(method, pathname)?.declared.route.rateLimit ?? 'users';
}
