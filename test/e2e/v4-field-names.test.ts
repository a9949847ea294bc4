import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { V4_BASE } from '../../api-edge/routes/bases.ts';
import { V4_ROUTES } from '../../api-edge/routes/v4/index.ts';
import { fillPath, ROUTE_CASES, withQuery, type RouteCall } from '../harness/routes.ts';
import { ADMIN, startTestStack, type TestStack } from '../harness/stack.ts';

/** Each snake_case field a v4 route renamed, with its camelCase alias, from the route declarations. */
const RENAMED = V4_ROUTES.filter((route) => route.aliases).flatMap((route) =>
  Object.entries(route.aliases!).map(([name, former]) => ({ route: `${route.method} ${V4_BASE}${route.path}`, method: route.method, template: `${V4_BASE}${route.path}`, name, former, inQuery: !!route.input.query?.[name] })),
);

/**
 * v4 request fields are snake_case; the camelCase names the routes shipped with stay accepted as
 * deprecated aliases (api-edge/routes/field-aliases.ts). Through HTTP, every renamed field of every
 * route: either name gets the same answer, and both with different values are a 400 naming the
 * snake_case field. The values sent are of no field's type, so that nothing is created.
 */
describe('v4 snake_case request fields and their camelCase aliases', () => {
  let stack: TestStack;
  let acme: string;

  beforeAll(async () => {
    stack = await startTestStack();
    acme = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: any) => t.slug === 'acme').id;
  });
  afterAll(() => stack?.close());

  const callOf = (route: string, method: string, template: string): RouteCall => {
    const c = ROUTE_CASES[route]!;
    return { route, method, template, path: fillPath(template, { ...c.sample, tenantId: acme }), tenant: acme, case: c };
  };

  it.each(RENAMED)('$route: $name and $former', async ({ route, method, template, name, former, inQuery }) => {
    // The sample's own value of the field (under either name) is left out: each call names it once.
    const given = callOf(route, method, template);
    const query = new URLSearchParams(given.case.query ?? '');
    query.delete(name);
    query.delete(former);
    const call = { ...given, case: { ...given.case, query: query.toString() || undefined } };
    const { [name]: _, [former]: __, ...sample } = (call.case.body ?? {}) as Record<string, unknown>;
    const send = (fields: Record<string, unknown>) =>
      inQuery
        ? stack.request(method, withQuery(call, new URLSearchParams(fields as Record<string, string>).toString()), { as: ADMIN, body: call.case.body })
        : stack.request(method, withQuery(call), { as: ADMIN, body: { ...sample, ...fields } });
    const wrong = inQuery ? 'maybe' : { '(not a value of this field)': true };
    const bySnake = await send({ [name]: wrong });
    const byCamel = await send({ [former]: wrong });
    expect(bySnake.status, JSON.stringify(bySnake.body)).toBeGreaterThanOrEqual(400);
    expect([byCamel.status, byCamel.body]).toEqual([bySnake.status, bySnake.body]);
    if (bySnake.status === 400) expect(String(bySnake.body.error.details?.field)).not.toMatch(new RegExp(`^${former}\\b`));

    const both = await send(inQuery ? { [name]: 'true', [former]: 'false' } : { [name]: ['a'], [former]: ['b'] });
    expect(both.status, JSON.stringify(both.body)).toBe(400);
    expect(both.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: name } });
  });
});
