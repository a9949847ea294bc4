import { MeSchema, ProvisionSelfInputSchema, TenantMembershipSchema, UpdateProfileInputSchema } from '../../../control-plane/contracts.ts';
import { listOf, membershipOutput, param } from '../params.ts';
import { bodyAndQueryOptions, jsonObjectBody } from '../request-input.ts';
import { defineRoute } from '../route.ts';

/** v4 identity: the caller's own record and profile, their tenant memberships, self-provisioning and declining an invitation. */
export const v4IdentityRoutes = [
  defineRoute({
    method: 'GET',
    path: '/identity/me',
    procedure: 'identity.me',
    tenant: 'none',
    input: {},
    output: { 200: { description: 'The caller', schema: MeSchema } },
    docs: { operationId: 'getMe', summary: "The caller's own record", tag: 'Identity' },
    sample: {},
    handler: ({ call, procedure }) => procedure.query(call(), {}),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/identity/me/profile',
    procedure: 'identity.updateProfile',
    tenant: 'none',
    input: { body: { schema: UpdateProfileInputSchema } },
    output: { 200: { description: 'The caller', schema: MeSchema } },
    docs: { operationId: 'updateProfile', summary: "Update the caller's name or preferences", tag: 'Identity' },
    sample: { body: { name: 'route case' } },
    handler: ({ body, call, procedure }) => procedure.mutation(call(), jsonObjectBody(body)),
  }),
  defineRoute({
    method: 'GET',
    path: '/identity/tenants',
    procedure: 'identity.tenants',
    tenant: 'none',
    input: {},
    output: { 200: { description: 'Memberships', schema: listOf(TenantMembershipSchema) } },
    docs: { operationId: 'listMyTenants', summary: "The caller's tenants", tag: 'Identity' },
    sample: {},
    handler: async ({ call, procedure }) => ({ data: await procedure.query(call(), {}) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/identity/me/provision',
    procedure: 'identity.provision',
    tenant: 'none',
    input: {
      query: { tenant_id: param(ProvisionSelfInputSchema.shape.tenant_id, { required: false, description: 'May be given in the body instead' }) },
      body: { schema: ProvisionSelfInputSchema.partial(), required: false },
    },
    output: membershipOutput,
    docs: {
      operationId: 'provisionMe',
      summary: 'Join a tenant: accept its invitation, or join one whose domain matches the verified e-mail address',
      tag: 'Identity',
      errors: [409],
    },
    sample: { body: {} },
    handler: async ({ request, body, set, call, procedure }) => {
      // `tenant_id` in the body or the query string; anything else is refused by the procedure.
      const grant = await procedure.mutation(call(), bodyAndQueryOptions(request, body));
      set.status = grant.created ? 201 : 200;
      return grant.membership;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/identity/me/decline',
    procedure: 'identity.decline',
    tenant: 'none',
    input: {
      query: { tenant_id: param(ProvisionSelfInputSchema.shape.tenant_id, { required: false, description: 'May be given in the body instead' }) },
      body: { schema: ProvisionSelfInputSchema.partial(), required: false },
    },
    output: { 204: { description: 'Declined: the invitation is deleted' } },
    docs: { operationId: 'declineInvitation', summary: "Decline the caller's invitation to a tenant (expired or not)", tag: 'Identity' },
    sample: { body: {} },
    handler: async ({ request, body, set, call, procedure }) => {
      await procedure.mutation(call(), bodyAndQueryOptions(request, body));
      set.status = 204;
    },
  }),
];
