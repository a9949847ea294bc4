import { Elysia } from 'elysia';
import type { ControlPlane } from '../../../control-plane/contracts.ts';
import type { RequestCalls } from '../../request-context.ts';
import { jsonObjectBody, queryValue, untrustedQueryValue } from '../request-input.ts';
import { v3UserListItem } from './shape.ts';

/** v3 users: the caller's profile, other members of the tenant, and the admin listing. */
export function v3UserRoutes(cp: ControlPlane, calls: RequestCalls) {
  return new Elysia({ name: 'v3-users' })
    .get('/users/me', ({ request }) => cp.query(calls.of(request), 'users', 'get', { id: 'me' }))
    .get('/users/:id', ({ request, params }) => cp.query(calls.of(request), 'users', 'get', { id: params.id }))
    .get('/users', async ({ request }) => {
      const params = new URL(request.url).searchParams;
      const page = await cp.query(calls.of(request), 'users', 'list', {
        role: queryValue(params, 'role'),
        status: untrustedQueryValue(params, 'status'),
        search: queryValue(params, 'search'),
        limit: queryValue(params, 'limit'),
        offset: queryValue(params, 'offset'),
      });
      return { data: page.items.map(v3UserListItem), total: page.total };
    })
    .patch('/users/:id', ({ request, params, body }) =>
      cp.mutation(calls.of(request), 'users', 'update', { id: params.id, changes: jsonObjectBody(body) }),
    );
}
