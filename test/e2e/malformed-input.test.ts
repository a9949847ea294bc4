import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { fillPath, paramsOf, ROUTE_CASES, routeCalls, servedRoutes, withQuery } from '../harness/routes.ts';
import { MAX_BODY_BYTES } from '../../api-edge/plugins/body-limit.ts';
import { ADMIN, GLOBEX_ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';

const PLATFORM_ADMIN = 'platform@svc.test';
/** Names what a body that is accepted creates, so that it is removed afterwards. */
const RUN = `fuzz-${randomUUID().slice(0, 8)}`;
/** An administrator of acme of this file's own, so that no other file's users see these requests' effects. */
const FUZZER = { sub: randomUUID(), email: `${RUN}@acme.test`, name: RUN };
const DEEP = 100_000;

/** Bodies that are JSON but not what any route takes, or values at the edges of what JSON and PostgreSQL hold. */
const BODIES: Array<{ label: string; raw: string }> = [
  { label: 'array', raw: '[]' },
  { label: 'string', raw: '"text"' },
  { label: 'number', raw: '1' },
  { label: 'null', raw: 'null' },
  { label: 'true', raw: 'true' },
  { label: 'empty object', raw: '{}' },
  { label: 'overflowing number', raw: '{"name":"RUN","budget":1e309,"data":{"n":1e309},"preferences":{"n":1e309}}' },
  { label: 'lone surrogate', raw: '{"name":"\\ud800","slug":"\\ud800","email":"\\udfff@x.test","preferences":{"k":"\\ud800"},"input":{"k":"\\ud800"}}' },
  { label: 'surrogate key', raw: '{"\\ud800":1,"name":"RUN"}' },
  { label: 'NUL key', raw: '{"\\u0000":1,"name":"RUN"}' },
  { label: 'deep nesting', raw: `{"name":"RUN","metadata":${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}}` },
  { label: 'wrong types', raw: '{"name":1,"slug":[],"domains":"x","homeRegion":5,"preferences":[],"input":"x","async":"yes","backend":7,"dryRun":"no","tenant_id":{}}' },
  { label: 'huge integer', raw: '{"name":"RUN","budget":123456789012345678901234567890,"limit":99999999999999999999}' },
  { label: 'proto keys', raw: '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}},"name":"RUN"}' },
].map(({ label, raw }) => ({ label, raw: raw.replaceAll('"RUN"', `"${RUN}"`) }));

/** Routes that take a streamed upload (documents, resource files, webhook deliveries), which set their own limits. */
const isUpload = (path: string) => /\/documents(\/upload|\/classify)?\/?(\?|$)|\/files\/|^\/v4\/webhooks\/[^/]+\/[^/]+\/?$/.test(path);

/** Path segments that are not ids of anything, or not text PostgreSQL holds. */
const SEGMENTS = ['%00', '%C0%AF', '%ED%A0%80', 'a'.repeat(5000), '..%2F..%2Fetc', '%2F', '00000000-0000-0000-0000-00000000000g', '1e309', '-1', '%F0%9F%98%80'];

/** Query strings with repeated, nested, oversized or malformed values. */
const QUERIES = [
  'limit=1e3',
  'limit=-0',
  'limit=0x10',
  'limit=99999999999999999999',
  'offset=1e400',
  'limit[]=1',
  'limit=1&limit=2',
  'sort=%00',
  'sort=' + 'x,'.repeat(500),
  'cursor=%ED%A0%80',
  'cursor=' + 'A'.repeat(10000),
  'search=%00',
  'search=%ED%A0%80',
  'type=%00',
  'type=project&filter[budget.gte]=1e309',
  'type=project&filter[createdAt.gte]=99999-99-99',
  'type=project&filter[%00]=1',
  'type=project&filter[a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p]=1',
  'type=project&filter[budget.in]=' + '1,'.repeat(5000),
  'type=project&filter[name.contains]=%25%5F%5C',
  'state=%ED%A0%80',
  'email=%00@x.test',
  'email=' + 'a'.repeat(5000) + '@x.test',
  'tenant_id=%00',
  'dryRun=maybe',
];

/**
 * Malformed input on every route: a 4xx with the error body, never a 500. Each request is one the
 * caller may make (an administrator of the tenant named), so it reaches the route's validation.
 */
describe('malformed input on every route', () => {
  let stack: TestStack;
  let acme: string;
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  beforeAll(async () => {
    // Budgets well above the file's requests: each must reach the route's validation, not a 429.
    const plenty = { points: 100_000, durationSeconds: 60 };
    stack = await startTestStack({ devUsers: [...DEV_USERS, FUZZER], rateLimits: { policies: { resources: plenty, users: plenty } } });
    const tenants = await stack.request('GET', '/v4/identity/tenants', { as: ADMIN });
    acme = tenants.body.data.find((t: any) => t.slug === 'acme').id;
    const me = await stack.request('GET', '/v4/identity/me', { as: FUZZER.email });
    await sql`insert into memberships (tenant_id, user_id, roles) values (${acme}::uuid, ${me.body.id}::uuid, '{admin}')`;
  });
  afterAll(async () => {
    await sql`delete from resources where data ->> 'name' = ${RUN}`;
    await sql.end();
    await stack?.close();
  });

  /** Each route once per path parameter, that parameter `x` and the others naming what the caller may use. */
  const routes = (tenant: string, x: string) =>
    routeCalls({ tenantId: tenant }).flatMap((call) =>
      paramsOf(call.template).map((param) => [call.method, withQuery({ ...call, path: fillPath(call.template, { ...call.case.sample, tenantId: tenant, [param]: x }) })] as const),
    );

  /** Every route that reads a body, with a dry run where the route provisions. */
  const bodyRoutes = (tenant: string) => routeCalls({ tenantId: tenant }).filter((call) => call.case.body !== undefined).map((call) => [call.method, withQuery(call)] as const);

  /** Every GET route, with the query strings below in place of its own. */
  const queryRoutes = (tenant: string) => routeCalls({ tenantId: tenant }).filter((call) => call.method === 'GET').map((call) => call.path);

  it('covers every route the edge serves', () => {
    expect(servedRoutes().filter((route) => !route.case).map((route) => route.route)).toEqual([]);
    expect(Object.keys(ROUTE_CASES).filter((route) => !servedRoutes().some((served) => served.route === route))).toEqual([]);
  });

  /** Every request of `send` whose answer is a server error, or an error without the error body. */
  async function serverErrors(send: (check: (method: string, path: string, rawBody?: string) => Promise<void>) => Promise<void>): Promise<string[]> {
    const found: string[] = [];
    const requests: Array<() => Promise<void>> = [];
    await send(async (method, path, rawBody) => {
      for (const as of [FUZZER.email, PLATFORM_ADMIN]) {
        requests.push(async () => {
          const response = await stack.request(method, path, { as, rawBody });
          if (response.status >= 500 || (response.status >= 400 && !/^[A-Z_]+$/.test(response.body?.error?.code ?? ''))) {
            found.push(`${response.status} for ${as} ${method} ${path.slice(0, 100)} ${rawBody?.slice(0, 60) ?? ''}`);
          }
        });
      }
    });
    // A few at a time: every route's answer is checked, in a fraction of the time one by one takes.
    const lanes = Array.from({ length: 6 }, async () => {
      for (let next = requests.shift(); next; next = requests.shift()) await next();
    });
    await Promise.all(lanes);
    return found;
  }

  // Every route, several odd inputs each, as two callers: more than the default 30 s on a busy machine.
  it('answers odd path segments with a client error', { timeout: 180_000 }, async () => {
    const found = await serverErrors(async (check) => {
      for (const segment of SEGMENTS) {
        for (const [method, path] of routes(acme, segment)) await check(method, path, method === 'GET' || method === 'DELETE' ? undefined : '{}');
      }
    });
    expect(found).toEqual([]);
  });

  it('answers odd bodies with a client error', { timeout: 180_000 }, async () => {
    const found = await serverErrors(async (check) => {
      for (const { raw } of BODIES) {
        for (const [method, path] of bodyRoutes(acme)) await check(method, path, raw);
      }
    });
    expect(found).toEqual([]);
    // Nested beyond what the platform takes: refused whole, nothing created.
    const deep = BODIES.find((b) => b.label === 'deep nesting')!.raw;
    const refused = await stack.request('POST', `${V3}/resources/project`, { as: FUZZER.email, rawBody: deep });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { issue: 'must not be nested more than 100 levels deep' } });
    expect(refused.body.error.details.field).toMatch(/^metadata(\.a){99}$/);
  });

  it('answers odd query strings with a client error', { timeout: 180_000 }, async () => {
    const found = await serverErrors(async (check) => {
      for (const query of QUERIES) {
        for (const path of queryRoutes(acme)) await check('GET', `${path}?${query}`);
      }
    });
    expect(found).toEqual([]);
  });

  it('refuses a JSON body over the limit on every route that reads one, with 413 and nothing created', { timeout: 180_000 }, async () => {
    const oversize = JSON.stringify({ name: RUN, pad: 'x'.repeat(MAX_BODY_BYTES) });
    const accepted: string[] = [];
    for (const [method, path] of bodyRoutes(acme)) {
      const answer = await stack.request(method, path, { as: FUZZER.email, rawBody: oversize, conformance: false });
      // Uploads stream their bodies to limits of their own, and refuse a JSON body as no form.
      const limit = answer.status === 413 || (isUpload(path) && answer.status >= 400 && answer.status < 500);
      if (!limit) accepted.push(`${method} ${path.slice(0, 100)} -> ${answer.status}`);
    }
    expect(accepted).toEqual([]);
    const [created] = await sql<{ n: number }[]>`select count(*)::int as n from resources where data ->> 'name' = ${RUN}`;
    expect(created!.n).toBe(0);
  });

  it("reaches no other tenant on any route, however the tenant segment is written (case, id or slug, trailing slash)", { timeout: 180_000 }, async () => {
    // The caller is a member of globex only: every spelling of acme must be refused, never served.
    const spellings = [acme.toUpperCase(), 'ACME', 'Acme'];
    const reached: string[] = [];
    for (const spelling of spellings) {
      for (const call of routeCalls({ tenantId: spelling }).filter((c) => c.template.includes(':tenantId'))) {
        for (const path of [withQuery(call), withQuery({ ...call, path: `${call.path}/` })]) {
          const answer = await stack.request(call.method, path, { as: GLOBEX_ADMIN, rawBody: call.method === 'GET' || call.method === 'DELETE' ? undefined : '{}', conformance: false });
          if (answer.status < 400 || answer.status >= 500) reached.push(`${call.method} ${path.slice(0, 100)} -> ${answer.status}`);
        }
      }
    }
    expect(reached).toEqual([]);
  });
});

