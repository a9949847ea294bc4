import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, GLOBEX_ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';

const DATA = '/v4/data/resources';

/** v4 data beyond one resource: queries across types, aggregates, and actions declared on a type. */
describe('v4 data: query, aggregate and actions', () => {
  let stack: TestStack;
  let acme: string;
  let globex: string;
  /** A PascalCase suffix of this run, so that its type names never meet another run's. */
  const run = `Q${randomBytes(3).toString('hex')}`;
  const keyOf = (name: string) => `${name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()}-${run.toLowerCase()}`;

  beforeAll(async () => {
    const plenty = { points: 100_000, durationSeconds: 60 };
    stack = await startTestStack({ rateLimits: { policies: { resources: plenty, users: plenty } } });
    acme = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: any) => t.slug === 'acme').id;
    globex = (await stack.request('GET', '/v4/identity/tenants', { as: GLOBEX_ADMIN })).body.data.find((t: any) => t.slug === 'globex').id;
  });
  afterAll(() => stack?.close());

  async function createType(name: string, properties: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    const created = await stack.request('POST', `${DATA}/object-types`, { as: ADMIN, body: { name: `${name}${run}`, schema: { type: 'object', properties }, ...extra } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body as { key: string; name: string };
  }

  async function create(type: string, data: Record<string, unknown>) {
    const created = await stack.request('POST', `${DATA}/${acme}/${type}`, { as: ADMIN, body: { data } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body;
  }

  describe('query across types', () => {
    let invoice: { key: string; name: string };
    let bill: { key: string; name: string };
    const made: any[] = [];

    beforeAll(async () => {
      invoice = await createType('Invoice', { amount: { type: 'number' }, status: { type: 'string' } });
      bill = await createType('Bill', { amount: { type: 'number' }, status: { type: 'string' }, vendor: { type: 'string' } });
      const note = await createType('Note', { amount: { type: 'string' }, status: { type: 'string' } });
      for (const [type, data] of [
        [invoice.key, { amount: 50, status: 'open' }],
        [bill.key, { amount: 70, status: 'open', vendor: 'v1' }],
        [invoice.key, { amount: 5, status: 'open' }],
        [bill.key, { amount: 20, status: 'paid', vendor: 'v2' }],
        [invoice.key, { amount: 30, status: 'open' }],
        [note.key, { amount: 'lots', status: 'open' }],
        [bill.key, { amount: 90, status: 'open', vendor: 'v3' }],
      ] as const) {
        made.push(await create(type, data));
      }
    });

    it('answers the matching resources of every type named, each with its type, newest first', async () => {
      const response = await stack.request('POST', `${DATA}/${acme}/query`, {
        as: ADMIN,
        body: { types: [invoice.key, bill.name], where: { status: 'open', amount: { gte: 10 } } },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      const expected = made.filter((r) => r.type !== keyOf('Note') && r.data.status === 'open' && r.data.amount >= 10).reverse();
      expect(response.body.data.map((r: any) => [r.type, r.data.amount])).toEqual(expected.map((r) => [r.type, r.data.amount]));
      expect(response.body.data.map((r: any) => [r.type, r.data.amount])).toEqual([
        [bill.key, 90],
        [invoice.key, 30],
        [bill.key, 70],
        [invoice.key, 50],
      ]);
      expect(response.body).toMatchObject({ total: 4, hasMore: false, nextCursor: null });
      expect(response.body.data[0]).toEqual(made[6]);
      // A comma-separated string names the types too, as the CLI's --types gives them.
      const csv = await stack.request('POST', `${DATA}/${acme}/query`, { as: ADMIN, body: { types: `${bill.key},${invoice.key}`, where: { vendor: 'v1' } } });
      expect(csv.body.data.map((r: any) => r.id)).toEqual([made[1].id]);
    });

    it('walks every match by cursor, each once, and holds the cursor to its query', async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await stack.request('POST', `${DATA}/${acme}/query`, { as: ADMIN, body: { types: [invoice.key, bill.key], limit: 2, ...(cursor ? { cursor } : {}) } });
        expect(page.status, JSON.stringify(page.body)).toBe(200);
        expect(page.body.total).toBe(6);
        seen.push(...page.body.data.map((r: any) => r.id));
        cursor = page.body.nextCursor ?? undefined;
        expect(page.body.hasMore).toBe(cursor !== undefined);
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual(made.filter((r) => r.type !== keyOf('Note')).reverse().map((r) => r.id));

      const first = await stack.request('POST', `${DATA}/${acme}/query`, { as: ADMIN, body: { types: [invoice.key, bill.key], limit: 2 } });
      // The same types named in another order keep the cursor; other types or filters do not.
      const reordered = await stack.request('POST', `${DATA}/${acme}/query`, { as: ADMIN, body: { types: [bill.key, invoice.key], limit: 2, cursor: first.body.nextCursor } });
      expect(reordered.body.data.map((r: any) => r.id)).toEqual(seen.slice(2, 4));
      const other = await stack.request('POST', `${DATA}/${acme}/query`, { as: ADMIN, body: { types: [invoice.key], limit: 2, cursor: first.body.nextCursor } });
      expect(other.status).toBe(400);
      expect(other.body.error.details.field).toBe('cursor');
    });

    it('takes a field\'s kind from the schemas only where the types agree', async () => {
      // Note declares amount as text: across all three, a number literal compares with numbers and the text "lots" matches no range.
      const response = await stack.request('POST', `${DATA}/${acme}/query`, { as: ADMIN, body: { types: [invoice.key, bill.key, keyOf('Note')], where: { amount: { lt: 10 } } } });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.data.map((r: any) => r.data.amount)).toEqual([5]);
    });

    it('answers 404 naming an unknown type, and 400 for no types or too many', async () => {
      const unknown = await stack.request('POST', `${DATA}/${acme}/query`, { as: ADMIN, body: { types: [invoice.key, `missing-${run.toLowerCase()}`] } });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toMatchObject({ code: 'NOT_FOUND' });
      expect(unknown.body.error.message).toContain(`missing-${run.toLowerCase()}`);
      for (const types of [[], Array.from({ length: 21 }, () => invoice.key), undefined]) {
        const refused = await stack.request('POST', `${DATA}/${acme}/query`, { as: ADMIN, body: types === undefined ? {} : { types } });
        expect(refused.status).toBe(400);
        expect(refused.body.error.details.field).toBe('types');
      }
      const badWhere = await stack.request('POST', `${DATA}/${acme}/query`, { as: ADMIN, body: { types: [invoice.key], where: { or: [{ amount: { between: 1 } }] } } });
      expect(badWhere.status).toBe(400);
      expect(badWhere.body.error.details.field).toBe('where.or.0.amount');
      const bigLimit = await stack.request('POST', `${DATA}/${acme}/query`, { as: ADMIN, body: { types: [invoice.key], limit: 101 } });
      expect(bigLimit.body.error.details.field).toBe('limit');
    });

    it('keeps a query inside the tenant', async () => {
      const refused = await stack.request('POST', `${DATA}/${acme}/query`, { as: GLOBEX_ADMIN, body: { types: [invoice.key] } });
      expect(refused.status).toBe(403);
      const own = await stack.request('POST', `${DATA}/${globex}/query`, { as: GLOBEX_ADMIN, body: { types: [invoice.key] } });
      expect(own.status).toBe(404);
      const builtIn = await stack.request('POST', `${DATA}/${globex}/query`, { as: GLOBEX_ADMIN, body: { types: ['project'], where: { status: 'open', amount: 50 } } });
      expect(builtIn.status).toBe(200);
      expect(builtIn.body.data.map((r: any) => r.id)).not.toEqual(expect.arrayContaining([made[0].id]));
    });
  });

  describe('aggregate', () => {
    let sale: { key: string; name: string };
    /** Cents of the "cents" region: 0.01 .. 0.99 and 19.99 ten times, whose exact sum JSON can carry. */
    const cents = [...Array.from({ length: 99 }, (_, i) => (i + 1) / 100), ...Array.from({ length: 10 }, () => 19.99)];

    beforeAll(async () => {
      sale = await createType('Sale', {
        region: { type: 'string' },
        amount: { type: 'number' },
        customer: { type: 'string' },
        closedOn: { type: 'string', format: 'date' },
      });
      for (const [region, amount, customer, closedOn] of [
        ['north', 10, 'a', '2024-01-15'],
        ['north', 30, 'b', '2024-01-31'],
        ['north', 20, 'a', '2024-03-02'],
        ['south', 5, 'c', '2023-12-31'],
        ['tenths', 0.1, 'a', '2024-02-29'],
        ['tenths', 0.2, 'a', '2024-02-01'],
      ] as const) {
        await create(sale.key, { region, amount, customer, closedOn });
      }
      for (const amount of cents) await create(sale.key, { region: 'cents', amount });
      await create(sale.key, { customer: 'd' });
    });

    const aggregate = (body: Record<string, unknown>, type = sale.key) => stack.request('POST', `${DATA}/${acme}/${type}/aggregate`, { as: ADMIN, body });

    it('answers one row per group with count, count_distinct, sum, avg, min and max', async () => {
      const response = await aggregate({
        group_by: ['region'],
        metrics: {
          n: { count: '*' },
          withAmount: { count: 'amount' },
          customers: { count_distinct: 'customer' },
          total: { sum: 'amount' },
          mean: { avg: 'amount' },
          low: { min: 'amount' },
          high: { max: 'amount' },
          firstClosed: { min: 'closedOn' },
          lastClosed: { max: 'closedOn' },
        },
        where: { region: { in: ['north', 'south'] } },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toEqual({
        data: [
          { region: 'north', n: 3, withAmount: 3, customers: 2, total: 60, mean: 20, low: 10, high: 30, firstClosed: '2024-01-15T00:00:00.000Z', lastClosed: '2024-03-02T00:00:00.000Z' },
          { region: 'south', n: 1, withAmount: 1, customers: 1, total: 5, mean: 5, low: 5, high: 5, firstClosed: '2023-12-31T00:00:00.000Z', lastClosed: '2023-12-31T00:00:00.000Z' },
        ],
        hasMore: false,
      });
    });

    it('sums money exactly: 0.1 + 0.2 is 0.3, and a hundred-odd cents values add up to the cent', async () => {
      const response = await aggregate({ groupBy: ['region'], metrics: { total: { sum: 'amount' }, n: { count: '*' } }, where: { region: { in: ['tenths', 'cents'] } } });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      const exactCents = cents.reduce((sum, value) => sum + Math.round(value * 100), 0);
      expect(cents.reduce((a, b) => a + b, 0)).not.toBe(exactCents / 100);
      expect(response.body.data).toEqual([
        { region: 'cents', total: exactCents / 100, n: cents.length },
        { region: 'tenths', total: 0.3, n: 2 },
      ]);
      expect(JSON.stringify(response.body.data[1].total)).toBe('0.3');
    });

    it('groups by month of the creation time and of a date field, in UTC', async () => {
      const created = await aggregate({ groupBy: ['createdAt:month'], metrics: { n: { count: '*' } } });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const now = new Date();
      const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
      // Created just now, all in this month (or the previous one when the run spans midnight of a month's end).
      expect(created.body.data.reduce((n: number, row: any) => n + row.n, 0)).toBe(6 + cents.length + 1);
      expect(created.body.data.map((row: any) => row['createdAt:month'])).toContain(month);

      const closed = await aggregate({ groupBy: ['closedOn:month', 'region'], metrics: { n: { count: '*' }, total: { sum: 'amount' } }, where: { closedOn: { exists: true } } });
      expect(closed.status, JSON.stringify(closed.body)).toBe(200);
      expect(closed.body.data).toEqual([
        { 'closedOn:month': '2023-12-01T00:00:00.000Z', region: 'south', n: 1, total: 5 },
        { 'closedOn:month': '2024-01-01T00:00:00.000Z', region: 'north', n: 2, total: 40 },
        { 'closedOn:month': '2024-02-01T00:00:00.000Z', region: 'tenths', n: 2, total: 0.3 },
        { 'closedOn:month': '2024-03-01T00:00:00.000Z', region: 'north', n: 1, total: 20 },
      ]);
      const years = await aggregate({ groupBy: 'closedOn:year', metrics: { n: { count: '*' } }, limit: 1 });
      expect(years.body).toEqual({ data: [{ 'closedOn:year': '2023-01-01T00:00:00.000Z', n: 1 }], hasMore: true });
    });

    it.each<[string, Record<string, unknown>, string]>([
      ['an unknown operation', { groupBy: ['region'], metrics: { total: { median: 'amount' } } }, 'metrics.total'],
      ['a sum of dates', { groupBy: ['region'], metrics: { total: { sum: 'closedOn' } } }, 'metrics.total'],
      ['an alias that is not a name', { groupBy: ['region'], metrics: { 'total-amount': { sum: 'amount' } } }, 'metrics.total-amount'],
      ['two operations under one alias', { groupBy: ['region'], metrics: { total: { sum: 'amount', avg: 'amount' } } }, 'metrics.total'],
      ['no metrics', { groupBy: ['region'] }, 'metrics'],
      ['no group_by', { metrics: { n: { count: '*' } } }, 'group_by'],
      ['six group keys', { group_by: ['a', 'b', 'c', 'd', 'e', 'f'], metrics: { n: { count: '*' } } }, 'group_by'],
      ['a bucket of a text field (by its former name, groupBy)', { groupBy: ['region:month'], metrics: { n: { count: '*' } } }, 'group_by.0'],
      ['group_by and groupBy disagreeing', { group_by: ['region'], groupBy: ['customer'], metrics: { n: { count: '*' } } }, 'group_by'],
      ['a limit over 10000', { groupBy: ['region'], metrics: { n: { count: '*' } }, limit: 10_001 }, 'limit'],
      ['a misspelt where operator', { groupBy: ['region'], metrics: { n: { count: '*' } }, where: { amount: { gte: 1, lessThan: 2 } } }, 'where.amount'],
      ['a field the path gives', { type: 'project', groupBy: ['region'], metrics: { n: { count: '*' } } }, 'type'],
    ])('refuses %s with a 400 naming it', async (_label, body, field) => {
      const response = await aggregate(body);
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field } });
    });

    it('answers 404 for an unknown type and keeps to the tenant', async () => {
      expect((await aggregate({ groupBy: ['region'], metrics: { n: { count: '*' } } }, `missing-${run.toLowerCase()}`)).status).toBe(404);
      const other = await stack.request('POST', `${DATA}/${acme}/${sale.key}/aggregate`, { as: GLOBEX_ADMIN, body: { groupBy: ['region'], metrics: { n: { count: '*' } } } });
      expect(other.status).toBe(403);
      const own = await stack.request('POST', `${DATA}/${globex}/${sale.key}/aggregate`, { as: GLOBEX_ADMIN, body: { groupBy: ['region'], metrics: { n: { count: '*' } } } });
      expect(own.status).toBe(404);
    });
  });

  describe('actions', () => {
    let ticket: { key: string; name: string };

    beforeAll(async () => {
      ticket = await createType(
        'Ticket',
        { title: { type: 'string' }, status: { type: 'string', enum: ['open', 'in-progress', 'closed', 'escalated'] }, review: { type: 'object' } },
        {
          actions: {
            start: { from: { status: ['open'] }, set: { status: 'in-progress', 'review.stage': 'started' } },
            close: { from: { status: ['in-progress'] }, set: { status: 'closed' } },
            escalate: { from: { status: ['open', 'in-progress'] }, set: { status: 'escalated' }, workflow: 'project-briefing' },
            report: { workflow: 'active-projects' },
            broken: { set: { status: 'closed' }, workflow: `missing-${run.toLowerCase()}` },
          },
        },
      );
    });

    const act = (id: string, action: string, body?: unknown, as = ADMIN, tenant = acme) =>
      stack.request('POST', `${DATA}/${tenant}/${ticket.key}/${id}/actions/${action}`, { as, ...(body === undefined ? {} : { body }) });
    const read = async (id: string) => (await stack.request('GET', `${DATA}/${acme}/${ticket.key}/${id}`, { as: ADMIN })).body;

    it('applies an allowed transition through the checked write, and refuses one from another state with 409 naming the field', async () => {
      const created = await create(ticket.key, { title: 'printer', status: 'open' });
      const started = await act(created.id, 'start');
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      expect(started.headers.get('etag')).toBe('"2"');
      expect(started.body).toEqual({ resource: { ...created, data: { title: 'printer', status: 'in-progress', review: { stage: 'started' } }, version: 2, updatedAt: expect.any(String) } });

      const again = await act(created.id, 'start', {});
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({ code: 'CONFLICT', details: { action: 'start', field: 'status', current: 'in-progress', allowed: ['open'] } });
      expect(again.body.error.message).toContain('status is "in-progress"');
      expect(await read(created.id)).toEqual(started.body.resource);

      const closed = await act(created.id, 'close', { version: 2 });
      expect(closed.status).toBe(200);
      expect(closed.body.resource).toMatchObject({ version: 3, data: { status: 'closed' } });

      const history = await stack.request('GET', `/v4/data/resources/${acme}/${ticket.key}/${created.id}/history`, { as: ADMIN });
      expect(history.body.data.map((e: any) => [e.version, e.operation, e.action])).toEqual([
        [3, 'action', 'close'],
        [2, 'action', 'start'],
        [1, 'create', null],
      ]);
    });

    it('lets exactly one of 20 concurrent transitions from one state apply', async () => {
      const created = await create(ticket.key, { title: 'race', status: 'open' });
      const answers = await Promise.all(Array.from({ length: 20 }, () => act(created.id, 'start')));
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
      expect(answers.filter((a) => a.status === 409 && a.body.error.code === 'CONFLICT')).toHaveLength(19);
      expect(await read(created.id)).toMatchObject({ version: 2, data: { status: 'in-progress' } });
    });

    it('answers 404 for an undeclared action or an unknown resource, and 409 VERSION_CONFLICT at a stale version', async () => {
      const created = await create(ticket.key, { title: 'desk', status: 'open' });
      const undeclared = await act(created.id, 'archive');
      expect(undeclared.status).toBe(404);
      expect(undeclared.body.error.message).toContain('archive');
      expect((await act('00000000-0000-4000-8000-000000000000', 'start')).status).toBe(404);
      expect((await act(created.id, 'constructor')).status).toBe(404);

      const stale = await act(created.id, 'start', { version: 7 });
      expect(stale.status).toBe(409);
      expect(stale.body.error).toMatchObject({ code: 'VERSION_CONFLICT', details: { currentVersion: 1 } });
      const staleHeader = await stack.request('POST', `${DATA}/${acme}/${ticket.key}/${created.id}/actions/start`, { as: ADMIN, headers: { 'if-match': '"4"' } });
      expect(staleHeader.status).toBe(409);
      expect(await read(created.id)).toEqual(created);
      const current = await act(created.id, 'start', { version: 1 });
      expect(current.status).toBe(200);

      const inputWithoutWorkflow = await act(created.id, 'close', { input: { note: 'x' } });
      expect(inputWithoutWorkflow.status).toBe(400);
      expect(inputWithoutWorkflow.body.error.details.field).toBe('input');
      const unknownField = await act(created.id, 'close', { reason: 'x' });
      expect(unknownField.status).toBe(400);
    });

    it('starts the action\'s workflow after the write, with the resource as input, and the execution completes', async () => {
      const created = await create(ticket.key, { title: 'outage', status: 'open' });
      const escalated = await act(created.id, 'escalate', { input: { question: 'Which projects are active?', status: 'active' } });
      expect(escalated.status, JSON.stringify(escalated.body)).toBe(200);
      expect(escalated.body.resource).toMatchObject({ version: 2, data: { status: 'escalated' } });
      expect(escalated.body.executionId).toMatch(/^[0-9a-f-]{36}$/);
      const done = await until(
        () => stack.request('GET', `${V3}/orchestrate/executions/${escalated.body.executionId}`, { as: ADMIN }),
        (r) => r.status === 200 && r.body.state !== 'running',
      );
      expect(done.body).toMatchObject({ workflowId: 'project-briefing', state: 'completed' });
      expect(done.body.output.answer).toEqual(expect.any(String));
      expect(done.body.input).toEqual({ question: 'Which projects are active?', status: 'active', action: 'escalate', resource: escalated.body.resource });
      expect(done.body.metadata).toEqual({ action: 'escalate', type: ticket.key, resourceId: created.id });

      const reported = await act(created.id, 'report');
      expect(reported.status).toBe(200);
      expect(reported.body.resource).toMatchObject({ version: 3, data: { status: 'escalated' } });
      const report = await until(
        () => stack.request('GET', `${V3}/orchestrate/executions/${reported.body.executionId}`, { as: ADMIN }),
        (r) => r.status === 200 && r.body.state !== 'running',
      );
      expect(report.body.state).toBe('completed');
    }, 60_000);

    it('writes nothing when the action\'s workflow does not exist', async () => {
      const created = await create(ticket.key, { title: 'chair', status: 'open' });
      const broken = await act(created.id, 'broken');
      expect(broken.status).toBe(404);
      expect(broken.body.error.message).toContain(`missing-${run.toLowerCase()}`);
      expect(await read(created.id)).toEqual(created);
    });

    it('refuses another tenant\'s caller and changes nothing', async () => {
      const created = await create(ticket.key, { title: 'lamp', status: 'open' });
      const named = await act(created.id, 'start', undefined, GLOBEX_ADMIN);
      expect(named.status).toBe(403);
      const own = await act(created.id, 'start', undefined, GLOBEX_ADMIN, globex);
      expect(own.status).toBe(404);
      const project = await stack.request('POST', `${DATA}/${globex}/project/${created.id}/actions/start`, { as: GLOBEX_ADMIN });
      expect(project.status).toBe(404);
      expect(await read(created.id)).toEqual(created);
    });
  });
});
