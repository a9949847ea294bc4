import { Elysia } from 'elysia';
import { describe, expect, it } from 'vitest';
import { RESERVED_WEBHOOK_SEGMENTS } from '../../control-plane/contracts.ts';
import { publicRouteOf, webhookDeliveryOf } from './public-routes.ts';
import { isStreamedUpload, rateLimitGroupOf } from './route-checks.ts';
import { V3_BASE, V4_BASE } from './bases.ts';
import { DECLARED_ROUTES, routeOf, siblingSegments, type DeclaredRoute } from './route-lookup.ts';

/** The path a route's sample request goes to (`:tenantId` as a slug). */
const samplePath = ({ base, route }: DeclaredRoute) =>
  base + route.path.replace(/:([A-Za-z]+)/g, (_, name: string) => route.sample.params?.[name] ?? 'acme');

const key = ({ base, route }: DeclaredRoute) => `${route.method} ${base}${route.path}`;

describe('the pre-routing checks read the route declarations', () => {
  it('finds the route that Elysia routes each declared route sample to', async () => {
    const app = new Elysia();
    for (const declared of DECLARED_ROUTES) app.route(declared.route.method, declared.base + declared.route.path, () => key(declared), { parse: 'none' });
    for (const declared of DECLARED_ROUTES) {
      const path = samplePath(declared);
      const routed = await (await app.handle(new Request(`http://edge${path}`, { method: declared.route.method }))).text();
      expect(routed, `${declared.route.method} ${path}`).toBe(key(declared));
      expect(routeOf(declared.route.method, path) && key(routeOf(declared.route.method, path)!.declared)).toBe(routed);
      expect(routeOf(declared.route.method, `${path}/`)?.declared).toBe(routeOf(declared.route.method, path)?.declared);
    }
  });

  it("takes each route's authentication, body and rate-limit budget from its declaration", () => {
    for (const declared of DECLARED_ROUTES) {
      const { method, docs, parse, rateLimit } = declared.route;
      const path = samplePath(declared);
      const at = `${method} ${path}`;
      expect(publicRouteOf(method, path), at).toBe({ webhookSignature: 'webhook-delivery', realtimeToken: 'realtime-connect', none: undefined }[docs.security ?? 'none']);
      expect(isStreamedUpload(new Request(`http://edge${path}`, { method })), at).toBe(parse === 'none');
      expect(rateLimitGroupOf(method, path), at).toBe(rateLimit ?? 'users');
    }
    // A path no route serves is neither public nor streamed, and spends the shared budget.
    expect(publicRouteOf('GET', `${V4_BASE}/webhooks/acme/billing`)).toBeUndefined();
    expect(isStreamedUpload(new Request(`http://edge${V4_BASE}/data/documents/nothing`, { method: 'POST' }))).toBe(false);
    expect(rateLimitGroupOf('PUT', `${V4_BASE}/data/resources/acme/project`)).toBe('users');
  });

  it('gives the resource budget to every route of the resource engine, and the upload budget to document uploads', () => {
    const resourceEngine = (d: DeclaredRoute) =>
      (d.base === V3_BASE && /^\/resources(\/|$)/.test(d.route.path)) ||
      (d.base === V4_BASE && (d.route.path.startsWith('/data/resources/') || /^\/verticals\/[^/]+\/resources\//.test(d.route.path)));
    const documentUpload = (d: DeclaredRoute) => d.route.method === 'POST' && d.route.parse === 'none' && d.route.procedure.startsWith('documents.');
    const budgets = Object.fromEntries(DECLARED_ROUTES.map((d) => [key(d), d.route.rateLimit ?? 'users']));
    const expected = Object.fromEntries(DECLARED_ROUTES.map((d) => [key(d), resourceEngine(d) ? 'resources' : documentUpload(d) ? 'uploads' : 'users']));
    expect(budgets).toEqual(expected);
    expect(Object.values(budgets).filter((b) => b === 'uploads')).toHaveLength(3);
  });

  it('never takes a management path for a webhook delivery: the names the delivery route leaves to authentication are the sources the control plane reserves', () => {
    const delivery = DECLARED_ROUTES.find((d) => d.route.docs.security === 'webhookSignature')!;
    const source = delivery.segments.lastIndexOf(null);
    expect([...siblingSegments(delivery, source)].sort()).toEqual([...RESERVED_WEBHOOK_SEGMENTS].sort());
    for (const reserved of RESERVED_WEBHOOK_SEGMENTS) {
      expect(publicRouteOf('POST', `${V4_BASE}/webhooks/acme/${reserved}`)).toBeUndefined();
      expect(webhookDeliveryOf(`${V4_BASE}/webhooks/acme/${reserved}/`)).toBeUndefined();
    }
    expect(webhookDeliveryOf(`${V4_BASE}/webhooks/acme/billing`)).toEqual({ tenantId: 'acme', source: 'billing' });
  });
});
