import { randomUUID } from 'node:crypto';
import type { JSONWebKeySet } from 'jose';
import postgres from 'postgres';
import { inject } from 'vitest';
import { DEV_USERS, type DevUser } from '../../api-edge/identity/dev-users.ts';
import { startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

/**
 * Two tenants of this file's own (so that no other test file's requests move their rows), each
 * with an administrator and a few objects of every kind a route names: a v3 project, an object
 * type with a file property and an action, a resource of it, an execution. Every object of a
 * tenant carries that tenant's `marker` in its data, so an answer that carries another tenant's
 * data is found by text.
 */

export const PLATFORM_ADMIN = 'platform@svc.test';

export interface ContractTenant {
  id: string;
  slug: string;
  side: 'a' | 'b';
  admin: { email: string; id: string };
  /** Text found in every object of the tenant, and nowhere else. */
  marker: string;
  /** Values of path parameters and tenant selectors that name this tenant's objects, by parameter name. */
  names: Record<string, string[]>;
}

export interface ContractFixture {
  stack: TestStack;
  /** The run's database as the tables' owner. */
  sql: postgres.Sql;
  a: ContractTenant;
  b: ContractTenant;
  /**
   * Values of parameters that name nothing of either tenant's, or what every tenant shares (`oid`:
   * a user of neither tenant, so that a membership the fuzzer grants never joins the two tenants).
   */
  shared: Record<string, string[]>;
  /**
   * A digest of every row of both tenants in every table with a `tenant_id` column, of the two
   * tenants' own rows and their children's, and of the two administrators' user records, by
   * table. Tables are found in the catalog, so a table added tomorrow is covered.
   */
  snapshot(): Promise<Record<string, string>>;
  /** Waits until no work the platform runs in the background (executions, tenant provisioning, document jobs, the embedding of new search chunks) is under way for the two tenants. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/** Values of parameters that name nothing of either tenant's, or something every tenant shares. */
export const SHARED_NAMES: Record<string, string[]> = {
  type: ['project'],
  objectType: ['project'],
  workflowId: ['project-briefing'],
  capability: ['geo', 'workflows.runtime'],
  propertyName: ['attachment'],
  action: ['approve'],
};

/** An object type of one tenant's own: its key names nothing in the other tenant. */
const OBJECT_TYPE = (side: string) => ({
  name: `Widget${side.toUpperCase()}`,
  key: `widget-${side}`,
  schema: { type: 'object', properties: { name: { type: 'string' }, status: { type: 'string' }, marker: { type: 'string' } } },
  fileProperties: { attachment: { maxSize: 4096, contentTypes: ['text/plain'] } },
  actions: { approve: { from: { status: ['open'] }, set: { status: 'approved' } } },
  searchFields: ['name'],
  indexes: ['status'],
});

export async function startContractFixture(options: { devSigningKeys?: JSONWebKeySet } = {}): Promise<ContractFixture> {
  const run = randomUUID().slice(0, 8);
  const users: DevUser[] = ['a', 'b'].map((side) => ({ sub: randomUUID(), email: `contract-${run}-${side}@contract.test`, name: `Contract ${side.toUpperCase()} ${run}`, tenant: `contract-${run}-${side}` }));
  const bystander: DevUser = { sub: randomUUID(), email: `contract-${run}-bystander@contract.test`, name: `Bystander ${run}` };
  // Budgets well above the file's requests: each must reach the route, not a 429.
  const plenty = { points: 1_000_000, durationSeconds: 60 };
  const stack = await startTestStack({ devUsers: [...DEV_USERS, ...users, bystander], devSigningKeys: options.devSigningKeys, rateLimits: { policies: { resources: plenty, users: plenty } } });
  const sql = postgres(inject('databaseUrl'), { max: 2, onnotice: () => {} });
  try {
    const tenants: ContractTenant[] = [];
    for (const [index, user] of users.entries()) {
      const created = await stack.request('POST', '/v4/platform/tenants', { as: PLATFORM_ADMIN, body: { name: `Contract ${run} ${index}`, slug: user.tenant, homeRegion: 'eu' } });
      if (created.status !== 201) throw new Error(`creating a tenant: ${created.status} ${JSON.stringify(created.body)}`);
      const id: string = created.body.id;
      await until(() => sql`select 1 from tenants where id = ${id}::uuid and status = 'active'`, (rows) => rows.length === 1);
      const me = await stack.request('GET', '/v4/identity/me', { as: user.email });
      await sql`insert into memberships (tenant_id, user_id, roles) values (${id}::uuid, ${me.body.id}::uuid, '{admin,tenant-admin}')`;
      tenants.push({ id, slug: user.tenant!, side: index === 0 ? 'a' : 'b', admin: { email: user.email, id: me.body.id }, marker: `marker-${run}-${index}-${randomUUID()}`, names: {} });
    }
    for (const tenant of tenants) await plant(stack, tenant);
    const ids = tenants.map((t) => t.id);
    await until(() => sql`select 1 from tenants where parent_id = any(${ids}::uuid[]) and status <> 'active'`, (rows) => rows.length === 0);
    const userIds = tenants.map((t) => t.admin.id);
    const bystanderId: string = (await stack.request('GET', '/v4/identity/me', { as: bystander.email })).body.id;
    // The planted objects' background work (provisioning, the first embedding, which loads the
    // model) is over before the first fuzzed request, whose snapshot it would otherwise change.
    await until(() => underWay(sql, ids), (rows) => rows.length === 0, 120_000);
    const tables = await sql<{ table: string }[]>`
      select c.relname as table from pg_class c join pg_namespace n on n.oid = c.relnamespace join pg_attribute a on a.attrelid = c.oid
      where n.nspname = 'public' and c.relkind in ('r', 'p') and a.attname = 'tenant_id' and not a.attisdropped order by 1`;
    const fixture: ContractFixture = {
      stack,
      sql,
      a: tenants[0]!,
      b: tenants[1]!,
      shared: { ...SHARED_NAMES, oid: [bystanderId] },
      async snapshot() {
        const parts = [
          ...tables.map(({ table }) => `select '${table}' as t, md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as d from "${table}" x where x.tenant_id = any($1::uuid[])`),
          `select 'tenants', md5(coalesce(string_agg(x::text, '|' order by x::text), '')) from tenants x where x.id = any($1::uuid[]) or x.parent_id = any($1::uuid[])`,
          `select 'users', md5(coalesce(string_agg(row(x.id, x.email, x.name, x.status, x.preferences, x.platform_roles)::text, '|' order by x.id), '')) from users x where x.id = any($2::uuid[])`,
        ];
        const rows = await sql.unsafe<{ t: string; d: string }[]>(parts.join(' union all '), [ids, userIds]);
        return Object.fromEntries(rows.map((r) => [r.t, r.d]));
      },
      async settle() {
        // The first embedding loads the model: on a busy machine that outlasts a short wait.
        await until(() => underWay(sql, ids), (rows) => rows.length === 0, 60_000).catch(() => undefined);
      },
      async close() {
        await sql.end({ timeout: 5 });
        await stack.close();
      },
    };
    return fixture;
  } catch (error) {
    await sql.end({ timeout: 5 });
    await stack.close();
    throw error;
  }
}

/** The platform's background work for the tenants `ids` that is still under way, one row per kind. */
function underWay(sql: postgres.Sql, ids: string[]) {
  return sql<{ work: string }[]>`
    select 'a running execution' as work from executions where tenant_id = any(${ids}::uuid[]) and state = 'running'
    union all select 'a child tenant being provisioned' from tenants where parent_id = any(${ids}::uuid[]) and status = 'provisioning'
    union all select 'an open document job' from document_jobs where tenant_id = any(${ids}::uuid[]) and state in ('queued', 'running')
    union all select 'a search chunk waiting for its embedding' from search_chunks where tenant_id = any(${ids}::uuid[]) and embedding_model is null
    limit 1`;
}

/** Creates the tenant's objects as its administrator and records their names. */
async function plant(stack: TestStack, tenant: ContractTenant): Promise<void> {
  const as = tenant.admin.email;
  const expectStatus = (response: { status: number; body: unknown }, status: number, what: string) => {
    if (response.status !== status) throw new Error(`${what}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body as any;
  };
  const project = expectStatus(
    await stack.request('POST', `${V3}/resources/project`, { as, headers: { 'x-tenant-id': tenant.id }, body: { name: `${tenant.marker} project`, status: 'active', budget: 7, metadata: { marker: tenant.marker } } }),
    201,
    'a project',
  );
  const type = expectStatus(await stack.request('POST', `/v4/data/resources/object-types?tenant_id=${tenant.id}`, { as, body: OBJECT_TYPE(tenant.side) }), 201, 'an object type');
  const widget = expectStatus(await stack.request('POST', `/v4/data/resources/${tenant.id}/widget-${tenant.side}`, { as, body: { data: { name: `${tenant.marker} widget`, status: 'open', marker: tenant.marker } } }), 201, 'a resource');
  const file = await fetch(`${stack.url}/v4/data/resources/${tenant.id}/widget-${tenant.side}/${widget.id}/files/attachment?filename=note.txt`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await stack.token(as)}`, 'content-type': 'application/octet-stream' },
    body: `${tenant.marker} file`,
  });
  if (file.status !== 200) throw new Error(`a file: ${file.status} ${await file.text()}`);
  const execution = expectStatus(
    await stack.request('POST', `${V3}/orchestrate/workflows/project-briefing/execute`, { as, headers: { 'x-tenant-id': tenant.id }, body: { input: { marker: tenant.marker }, async: false } }),
    200,
    'an execution',
  );
  // A live child: the tenant cannot be deleted (409) while it has one, so the fuzzer's own
  // administrator cannot delete the tenant every later request needs.
  const child = expectStatus(await stack.request('POST', `/v4/platform/tenants/${tenant.id}/children`, { as, body: { name: `${tenant.marker} child`, slug: `${tenant.slug}-child` } }), 201, 'a child tenant');
  // Configuration entries that hold the marker, a secret among them: no answer to the other tenant may carry them.
  expectStatus(
    await stack.request('PATCH', `/v4/platform/config/${tenant.id}/app-${tenant.side}/dev`, {
      as,
      body: { entries: [{ key: 'MARKER_SETTING', value: `${tenant.marker} setting` }, { key: 'MARKER_SECRET', value: `${tenant.marker} secret`, secret: true }] },
    }),
    200,
    'configuration entries',
  );
  tenant.names = {
    tenantId: [tenant.id, tenant.slug],
    tenant_id: [tenant.id, tenant.slug],
    'X-Tenant-Id': [tenant.id, tenant.slug],
    childId: [child.id],
    id: [project.id, widget.id, execution.id, tenant.admin.id],
    oid: [tenant.admin.id],
    objectTypeId: [type.objectTypeId],
    type: [`widget-${tenant.side}`],
    objectType: [`widget-${tenant.side}`, `Widget${tenant.side.toUpperCase()}`],
  };
}
