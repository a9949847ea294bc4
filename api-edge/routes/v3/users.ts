import { ListUsersInputSchema, UpdateUserInputSchema, UserRefInputSchema, UserSchema } from '../../../control-plane/contracts.ts';
import { param } from '../params.ts';
import { jsonObjectBody, queryValue, untrustedQueryValue } from '../request-input.ts';
import { defineRoute, NIL_ID } from '../route.ts';
import { v3UserListItem, V3UserPageSchema } from './shape.ts';

/** v3 users: the caller's profile, other members of the tenant, and the admin listing. */
export const v3UserRoutes = [
  defineRoute({
    method: 'GET',
    path: '/users/me',
    procedure: 'users.get',
    tenant: 'header',
    input: {},
    output: { 200: { description: 'The caller', schema: UserSchema } },
    docs: { operationId: 'getCurrentUser', summary: 'The caller in the tenant', tag: 'Users' },
    sample: {},
    handler: ({ call, procedure }) => procedure.query(call(), { id: 'me' }),
  }),
  defineRoute({
    method: 'GET',
    path: '/users/:id',
    procedure: 'users.get',
    tenant: 'header',
    input: { path: UserRefInputSchema.shape },
    output: { 200: { description: 'The user', schema: UserSchema } },
    docs: { operationId: 'getUser', summary: 'Get a member of the tenant', tag: 'Users' },
    sample: { params: { id: NIL_ID } },
    handler: ({ params, call, procedure }) => procedure.query(call(), { id: params.id }),
  }),
  defineRoute({
    method: 'GET',
    path: '/users',
    procedure: 'users.list',
    tenant: 'header',
    input: { query: ListUsersInputSchema.shape },
    output: { 200: { description: 'A page of users', schema: V3UserPageSchema } },
    docs: { operationId: 'listUsers', summary: 'List members of the tenant', tag: 'Users' },
    sample: {},
    handler: async ({ request, call, procedure }) => {
      const params = new URL(request.url).searchParams;
      const page = await procedure.query(call(), {
        role: queryValue(params, 'role'),
        status: untrustedQueryValue(params, 'status'),
        search: queryValue(params, 'search'),
        limit: queryValue(params, 'limit'),
        offset: queryValue(params, 'offset'),
      });
      return { data: page.items.map(v3UserListItem), total: page.total };
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/users/:id',
    procedure: 'users.update',
    tenant: 'header',
    input: {
      path: { id: param(UpdateUserInputSchema.shape.id, { description: 'A user id, or `me`' }) },
      body: { schema: UpdateUserInputSchema.shape.changes },
    },
    output: { 200: { description: 'The updated user', schema: UserSchema } },
    docs: { operationId: 'updateUser', summary: "Update a user's name or preferences", tag: 'Users' },
    sample: { params: { id: 'me' }, body: { name: 'route case' } },
    handler: ({ params, body, call, procedure }) => procedure.mutation(call(), { id: params.id, changes: jsonObjectBody(body) }),
  }),
];
