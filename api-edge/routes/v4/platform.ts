import {
  AppSchema,
  CreateAppInputSchema,
  CreateChildTenantInputSchema,
  CreateRootTenantInputSchema,
  FindUserByEmailInputSchema,
  PlatformUserSchema,
  TenantMembershipSchema,
  TenantRefSchema,
  TenantSchema,
  UserRefSchema,
} from '../../../control-plane/contracts.ts';
import { listOf, membershipOutput, param, tenantPath } from '../params.ts';
import { jsonObjectBody, untrustedQueryValue } from '../request-input.ts';
import { defineRoute, NIL_ID } from '../route.ts';

/** Renamed to snake_case; the former names stay accepted (field-aliases.ts). */
const TENANT_ALIASES = { starter_template: 'starterTemplate', home_region: 'homeRegion' };

/**
 * v4 platform: tenants (root, children, bootstrap of a child's admin, soft delete), app
 * enrollments, and user lookups, grants and removals. The tenant segment after `/platform/tenants/` is always `:tenantId` (the
 * router allows one parameter name per position); for the `children` routes it is the parent.
 */
export const v4PlatformRoutes = [
  defineRoute({
    method: 'POST',
    path: '/platform/tenants',
    procedure: 'tenants.createRoot',
    tenant: 'none',
    input: { body: { schema: CreateRootTenantInputSchema } },
    output: { 201: { description: 'The tenant, provisioning', schema: TenantSchema } },
    docs: { operationId: 'createRootTenant', summary: 'Create a root tenant', tag: 'Platform', errors: [409] },
    aliases: TENANT_ALIASES,
    sample: { body: {} },
    handler: async ({ body, set, call, procedure }) => {
      const tenant = await procedure.mutation(call(), jsonObjectBody(body));
      set.status = 201;
      return tenant;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/platform/tenants/:tenantId/children',
    procedure: 'tenants.createChild',
    tenant: 'path',
    input: { path: tenantPath, body: { schema: CreateChildTenantInputSchema } },
    output: { 201: { description: 'The tenant, provisioning', schema: TenantSchema } },
    docs: { operationId: 'createChildTenant', summary: 'Create a child tenant', tag: 'Platform', errors: [409] },
    aliases: TENANT_ALIASES,
    sample: { body: {} },
    handler: async ({ params, body, set, call, procedure }) => {
      const tenant = await procedure.mutation(call(params.tenantId), jsonObjectBody(body));
      set.status = 201;
      return tenant;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/platform/tenants/:tenantId/children/:childId/bootstrap-admin',
    procedure: 'tenants.bootstrapAdmin',
    tenant: 'path',
    input: { path: { ...tenantPath, childId: TenantRefSchema } },
    output: membershipOutput,
    docs: { operationId: 'bootstrapChildAdmin', summary: 'Make the caller an administrator of a child tenant', tag: 'Platform', errors: [409] },
    sample: { params: { childId: NIL_ID } },
    handler: async ({ params, set, call, procedure }) => {
      const grant = await procedure.mutation(call(params.tenantId), { childId: params.childId });
      set.status = grant.created ? 201 : 200;
      return grant.membership;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/platform/tenants/:tenantId/apps',
    procedure: 'apps.create',
    tenant: 'path',
    input: { path: tenantPath, body: { schema: CreateAppInputSchema } },
    output: { 201: { description: 'The app', schema: AppSchema } },
    docs: { operationId: 'createApp', summary: 'Enroll an app', tag: 'Platform', errors: [409] },
    aliases: { app_url: 'appUrl', child_tenant: 'childTenant', parent_tenant: 'parentTenant' },
    sample: { body: {} },
    handler: async ({ params, body, set, call, procedure }) => {
      const app = await procedure.mutation(call(params.tenantId), jsonObjectBody(body));
      set.status = 201;
      return app;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/platform/tenants/:tenantId/delete',
    procedure: 'tenants.delete',
    tenant: 'path',
    input: { path: tenantPath },
    output: { 204: { description: 'Deleted' } },
    docs: { operationId: 'deleteTenant', summary: 'Delete a tenant (soft)', tag: 'Platform', errors: [409] },
    sample: {},
    handler: async ({ params, set, call, procedure }) => {
      await procedure.mutation(call(params.tenantId), { tenantId: params.tenantId });
      set.status = 204;
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/platform/tenants/:tenantId/users/:oid/provision',
    procedure: 'tenants.provisionUser',
    tenant: 'path',
    input: { path: { ...tenantPath, oid: UserRefSchema } },
    output: membershipOutput,
    docs: {
      operationId: 'provisionTenantUser',
      summary: 'Invite a user to a tenant (a membership with status "invited" until the user accepts it)',
      tag: 'Platform',
      errors: [409],
    },
    sample: { params: { oid: NIL_ID } },
    handler: async ({ params, set, call, procedure }) => {
      const grant = await procedure.mutation(call(params.tenantId), { userId: params.oid });
      set.status = grant.created ? 201 : 200;
      return grant.membership;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/platform/tenants/:tenantId/users/:oid',
    procedure: 'tenants.removeUser',
    tenant: 'path',
    input: { path: { ...tenantPath, oid: UserRefSchema } },
    output: { 204: { description: 'Removed' } },
    docs: {
      operationId: 'removeTenantUser',
      summary: "Remove a user from a tenant: their membership, or their invitation (the user's open realtime connections end within seconds)",
      tag: 'Platform',
      errors: [409],
    },
    sample: { params: { oid: NIL_ID } },
    handler: async ({ params, set, call, procedure }) => {
      await procedure.mutation(call(params.tenantId), { userId: params.oid });
      set.status = 204;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/platform/users/by-email',
    procedure: 'tenants.findUserByEmail',
    tenant: 'none',
    input: { query: { email: param(FindUserByEmailInputSchema.shape.email, { required: true }) } },
    output: { 200: { description: 'The user', schema: PlatformUserSchema } },
    docs: { operationId: 'findUserByEmail', summary: 'Find a user by e-mail address', tag: 'Platform' },
    sample: { query: 'email=nobody@example.test' },
    handler: ({ request, call, procedure }) => procedure.query(call(), { email: untrustedQueryValue(new URL(request.url).searchParams, 'email') }),
  }),
  defineRoute({
    method: 'GET',
    path: '/platform/users/:oid/memberships',
    procedure: 'tenants.memberships',
    tenant: 'none',
    input: { path: { oid: UserRefSchema } },
    output: { 200: { description: 'Memberships', schema: listOf(TenantMembershipSchema) } },
    docs: { operationId: 'listUserMemberships', summary: "A user's memberships", tag: 'Platform' },
    sample: { params: { oid: NIL_ID } },
    handler: async ({ params, call, procedure }) => ({
      data: await procedure.query(call(), { userId: params.oid }),
    }),
  }),
];
