import { randomBytes, randomUUID } from 'node:crypto';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { devSecretsKey } from '../../control-plane/app/dev-secrets-key.ts';
import { createSecretBox } from '../../control-plane/secrets/secret-box.ts';
import { assertConforms } from '../harness/conformance.ts';
import { GLOBEX_ADMIN, startTestStack, type TestStack } from '../harness/stack.ts';
import { createTenantFixture, type TenantFixture } from '../harness/tenant-fixture.ts';
import { until } from '../harness/until.ts';

const PLATFORM_ADMIN = 'platform@svc.test';
const DATA = '/v4/data/resources';

/** A server-sent event stream read as it arrives: the events so far, and a wait for the next one that matches. */
interface EventStream {
  status: number;
  headers: Headers;
  /** The JSON body of a refused connection. */
  error?: any;
  events: EventSourceMessage[];
  comments: string[];
  /** The first event after `from` (an index into `events`) that `matches`, waiting for it if need be. */
  next(matches: (event: EventSourceMessage) => boolean, from?: number): Promise<EventSourceMessage>;
  close(): void;
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<EventStream> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const events: EventSourceMessage[] = [];
  const comments: string[] = [];
  let wake = () => {};
  let ended = false;
  const stream: EventStream = {
    status: response.status,
    headers: response.headers,
    events,
    comments,
    async next(matches, from = 0) {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const found = events.slice(from).find(matches);
        if (found) return found;
        if (ended || Date.now() > deadline) throw new Error(`no matching event; got ${JSON.stringify(events.map((e) => [e.event, e.id]))}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 500);
        });
      }
    },
    close: () => abort.abort(),
  };
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    stream.error = await response.json().catch(() => undefined);
    return stream;
  }
  const parser = createParser({ onEvent: (event) => (events.push(event), wake()), onComment: (comment) => void comments.push(comment) });
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    } catch {
      // aborted by close()
    } finally {
      ended = true;
      wake();
    }
  })();
  return stream;
}

/** v4 realtime: negotiation, resource change events over SSE, resume, isolation between tenants and instances, alerts. */
describe('v4 realtime', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  const run = `R${randomBytes(3).toString('hex')}`;
  let stack: TestStack;
  let other: TestStack;
  let north: TenantFixture;
  let south: TenantFixture;
  let free: TenantFixture;
  const streams: EventStream[] = [];
  let noteKey: string;

  /** A type of the tenant's own with an action. */
  async function createType(tenant: TenantFixture, name: string): Promise<string> {
    const created = await stack.request('POST', `${DATA}/object-types?tenant_id=${tenant.id}`, {
      as: tenant.admin.email,
      body: {
        name: `${name}${run}`,
        schema: { type: 'object', properties: { title: { type: 'string' }, status: { type: 'string' } } },
        actions: { close: { from: { status: ['open'] }, set: { status: 'closed' } } },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.key;
  }

  const negotiate = (tenant: TenantFixture, channels: string[], as = tenant.member.email, on = stack) =>
    on.request('POST', '/v4/realtime/negotiate', { as, body: { tenant_id: tenant.id, channels } });

  async function open(tenant: TenantFixture, channels: string[], options: { lastEventId?: string; on?: TestStack } = {}): Promise<EventStream> {
    const negotiated = await negotiate(tenant, channels);
    expect(negotiated.status, JSON.stringify(negotiated.body)).toBe(200);
    const url = new URL(negotiated.body.url);
    const on = options.on ?? stack;
    const stream = await connect(`${on.url}${url.pathname}${url.search}`, options.lastEventId ? { 'last-event-id': options.lastEventId } : {});
    streams.push(stream);
    expect(stream.status, JSON.stringify(stream.error)).toBe(200);
    assertConforms({ method: 'GET', path: '/v4/realtime/connect', status: stream.status, headers: stream.headers, body: undefined });
    await stream.next((e) => e.event === 'ready');
    return stream;
  }

  const create = async (tenant: TenantFixture, type: string, data: Record<string, unknown>) => {
    const created = await stack.request('POST', `${DATA}/${tenant.id}/${type}`, { as: tenant.admin.email, body: { data } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body;
  };
  const data = (event: EventSourceMessage) => JSON.parse(event.data);
  const about = (id: string) => (event: EventSourceMessage) => event.event?.startsWith('resource.') === true && data(event).id === id;

  beforeAll(async () => {
    north = await createTenantFixture(sql, 'rt-north', { plan: 'team' });
    south = await createTenantFixture(sql, 'rt-south', { plan: 'team' });
    free = await createTenantFixture(sql, 'rt-free', { plan: 'free' });
    const devUsers = [...DEV_USERS, ...[north, south, free].flatMap((t) => [t.admin, t.member])];
    stack = await startTestStack({ devUsers });
    // A second instance of the platform on the same database: another edge and control plane.
    other = await startTestStack({ devUsers, worker: false });
    noteKey = await createType(north, 'Note');
  });
  afterAll(async () => {
    for (const stream of streams) stream.close();
    await sql.end();
    await other?.close();
    await stack?.close();
  });

  it('negotiates a signed token for the tenant and channels, with the URL to connect to', async () => {
    const negotiated = await negotiate(north, ['resources', `resources:${noteKey}`]);
    expect(negotiated.status, JSON.stringify(negotiated.body)).toBe(200);
    expect(negotiated.body).toMatchObject({ tenantId: north.id, channels: ['resources', `resources:${noteKey}`], token: expect.any(String), expiresAt: expect.any(String) });
    const url = new URL(negotiated.body.url);
    expect(url.pathname).toBe('/v4/realtime/connect');
    expect(url.searchParams.get('token')).toBe(negotiated.body.token);
    const claims = decodeJwt(negotiated.body.token);
    expect(claims).toMatchObject({ tid: north.id, ch: ['resources', `resources:${noteKey}`] });
    // Short-lived: minutes, not hours.
    expect(claims.exp! - claims.iat!).toBeLessThanOrEqual(300);
  });

  it('delivers created, updated, action and deleted events with type, id and version, in order', async () => {
    const stream = await open(north, [`resources:${noteKey}`]);
    const note = await create(north, noteKey, { title: 'first', status: 'open' });
    const put = await stack.request('PUT', `${DATA}/${north.id}/${noteKey}/${note.id}`, { as: north.admin.email, body: { data: { title: 'second', status: 'open' }, version: 1 } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const acted = await stack.request('POST', `${DATA}/${north.id}/${noteKey}/${note.id}/actions/close`, { as: north.admin.email, body: {} });
    expect(acted.status, JSON.stringify(acted.body)).toBe(200);
    const removed = await stack.request('DELETE', `${DATA}/${north.id}/${noteKey}/${note.id}`, { as: north.admin.email, headers: { 'if-match': '"3"' } });
    expect(removed.status, JSON.stringify(removed.body)).toBe(204);

    await stream.next((e) => e.event === 'resource.deleted' && data(e).id === note.id);
    const mine = stream.events.filter(about(note.id));
    expect(mine.map((e) => e.event)).toEqual(['resource.created', 'resource.updated', 'resource.action', 'resource.deleted']);
    expect(mine.map((e) => data(e))).toEqual([
      { eventId: mine[0]!.id, event: 'created', type: noteKey, id: note.id, version: 1, at: expect.any(String) },
      { eventId: mine[1]!.id, event: 'updated', type: noteKey, id: note.id, version: 2, at: expect.any(String) },
      { eventId: mine[2]!.id, event: 'action', type: noteKey, id: note.id, version: 3, action: 'close', at: expect.any(String) },
      { eventId: mine[3]!.id, event: 'deleted', type: noteKey, id: note.id, version: 4, at: expect.any(String) },
    ]);
    const ids = mine.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    // Ids only: no resource data travels.
    expect(mine.every((e) => !('data' in data(e)) && !e.data.includes('first'))).toBe(true);
  });

  it('delivers only the channels of the token: one type, one resource', async () => {
    const memoKey = await createType(north, 'Memo');
    const pinned = await create(north, noteKey, { title: 'pinned', status: 'open' });
    const byResource = await open(north, [`resources:${noteKey}:${pinned.id}`]);
    const byType = await open(north, [`resources:${memoKey}`]);
    const memo = await create(north, memoKey, { title: 'memo' });
    const note = await create(north, noteKey, { title: 'another note' });
    await stack.request('PUT', `${DATA}/${north.id}/${noteKey}/${pinned.id}`, { as: north.admin.email, body: { data: { title: 'pinned', status: 'open', n: 1 }, version: 1 } });
    await byResource.next((e) => e.event === 'resource.updated');
    await byType.next(about(memo.id));
    expect(byResource.events.filter((e) => e.event?.startsWith('resource.')).map((e) => data(e).id)).toEqual([pinned.id]);
    expect(byType.events.filter((e) => e.event?.startsWith('resource.')).map((e) => data(e).id)).toEqual([memo.id]);
    expect(byType.events.some(about(note.id))).toBe(false);
  });

  it("never delivers another tenant's events", async () => {
    const southType = await createType(south, 'Secret');
    const northStream = await open(north, ['resources']);
    const southStream = await open(south, ['resources']);
    const secrets: Array<{ id: string }> = [];
    for (let i = 0; i < 3; i++) secrets.push(await create(south, southType, { title: `south secret ${i}` }));
    for (const secret of secrets) await southStream.next(about(secret.id));
    const own = await create(north, noteKey, { title: 'north after south' });
    await northStream.next(about(own.id));
    const seen = northStream.events.filter((e) => e.event?.startsWith('resource.')).map((e) => data(e));
    expect(seen.some((e) => e.type === southType || secrets.some((s) => s.id === e.id))).toBe(false);
    expect(southStream.events.some(about(own.id))).toBe(false);
  });

  it('refuses a token for another tenant, a tampered token and an expired one', async () => {
    const refused = await negotiate(north, ['resources'], south.admin.email);
    expect(refused.status).toBe(403);
    expect((await negotiate(north, ['resources'], GLOBEX_ADMIN)).status).toBe(403);

    const { token } = (await negotiate(south, ['resources'])).body;
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, tid: north.id })).toString('base64url')}.${signature}`;
    const tampered = await connect(`${stack.url}/v4/realtime/connect?token=${forged}`);
    expect(tampered.status).toBe(401);
    expect(tampered.error.error.code).toBe('UNAUTHORIZED');

    // Signed with the platform's own key (as only the platform holds it), but expired.
    const [{ sealedSecret }] = await sql<[{ sealedSecret: string }]>`select sealed_secret as "sealedSecret" from realtime_signing_keys where id = 1`;
    const secret = Buffer.from(createSecretBox(devSecretsKey()).open(sealedSecret, 'realtime_signing_keys.secret:1'), 'base64');
    const expired = await new SignJWT({ tid: north.id, ch: ['resources'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('svc-realtime')
      .setAudience('svc-realtime-connect')
      .setSubject(claims.sub)
      .setIssuedAt(Math.floor(Date.now() / 1000) - 600)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 300)
      .sign(new Uint8Array(secret));
    const late = await connect(`${stack.url}/v4/realtime/connect`, { authorization: `Bearer ${expired}` });
    expect(late.status).toBe(401);
    expect(late.error.error.message).toContain('expired');
    for (const response of [tampered, late]) assertConforms({ method: 'GET', path: '/v4/realtime/connect', status: response.status, headers: response.headers, body: response.error });
  });

  it('delivers a change made through one instance to a connection on another, negotiated on either', async () => {
    const negotiated = await negotiate(north, [`resources:${noteKey}`], north.member.email, other);
    expect(negotiated.status).toBe(200);
    const url = new URL(negotiated.body.url);
    // Negotiated on the second instance, connected to the first, and the other way round.
    const here = await connect(`${stack.url}${url.pathname}${url.search}`);
    const there = await open(north, [`resources:${noteKey}`], { on: other });
    streams.push(here);
    expect(here.status).toBe(200);
    const note = await create(north, noteKey, { title: 'made on the first instance' });
    const changed = await other.request('PUT', `${DATA}/${north.id}/${noteKey}/${note.id}`, { as: north.admin.email, body: { data: { title: 'changed on the second' }, version: 1 } });
    expect(changed.status).toBe(200);
    for (const stream of [here, there]) {
      await stream.next((e) => e.event === 'resource.updated' && data(e).id === note.id);
      expect(stream.events.filter(about(note.id)).map((e) => e.event)).toEqual(['resource.created', 'resource.updated']);
    }
  });

  it('resumes after Last-Event-ID with what happened while it was away', async () => {
    const first = await open(north, [`resources:${noteKey}`]);
    const note = await create(north, noteKey, { title: 'resume', status: 'open' });
    const created = await first.next(about(note.id));
    first.close();
    await stack.request('PUT', `${DATA}/${north.id}/${noteKey}/${note.id}`, { as: north.admin.email, body: { data: { title: 'resume 2', status: 'open' }, version: 1 } });
    await stack.request('POST', `${DATA}/${north.id}/${noteKey}/${note.id}/actions/close`, { as: north.admin.email, body: {} });
    const resumed = await open(north, [`resources:${noteKey}`], { lastEventId: created.id! });
    const ready = data(resumed.events.find((e) => e.event === 'ready')!);
    expect(ready).toMatchObject({ tenantId: north.id, resumed: true, lastEventId: created.id });
    await resumed.next((e) => e.event === 'resource.action' && data(e).id === note.id);
    expect(resumed.events.filter(about(note.id)).map((e) => [e.event, data(e).version])).toEqual([
      ['resource.updated', 2],
      ['resource.action', 3],
    ]);
    // The same over the query string, as a client without the header sends it.
    const negotiated = await negotiate(north, [`resources:${noteKey}`]);
    const byQuery = await connect(`${negotiated.body.url}&lastEventId=${created.id}`);
    streams.push(byQuery);
    await byQuery.next((e) => e.event === 'resource.action' && data(e).id === note.id);
  });

  it('says which events the log no longer holds, counts them as dropped, and alerts', async () => {
    const tenant = await createTenantFixture(sql, 'rt-small', { plan: 'team' });
    const users = [tenant.admin, tenant.member];
    const small = await startTestStack({ devUsers: [...DEV_USERS, ...users], worker: false });
    try {
      const type = (
        await small.request('POST', `${DATA}/object-types?tenant_id=${tenant.id}`, { as: tenant.admin.email, body: { name: `Tick${run}`, schema: { type: 'object' } } })
      ).body.key;
      expect((await small.request('POST', '/v4/realtime/negotiate', { as: tenant.member.email, body: { tenant_id: tenant.id, channels: ['resources'] } })).status).toBe(200);
      await sql`update realtime_streams set retain = 100 where tenant_id = ${tenant.id}::uuid`;
      const batch = await small.request('POST', `${DATA}/${tenant.id}/${type}/batch/create`, { as: tenant.admin.email, body: { items: Array.from({ length: 150 }, (_, n) => ({ n })) } });
      expect(batch.status, JSON.stringify(batch.body)).toBe(201);
      const negotiated = await small.request('POST', '/v4/realtime/negotiate', { as: tenant.member.email, body: { tenant_id: tenant.id, channels: ['resources'] } });
      const stream = await connect(negotiated.body.url, { 'last-event-id': '10' });
      streams.push(stream);
      const reset = await stream.next((e) => e.event === 'reset');
      expect(data(reset)).toEqual({ after: '10', resumedAt: '50', dropped: 40 });
      expect(reset.id).toBe('50');
      const last = await stream.next((e) => e.id === '150');
      expect(stream.events.filter((e) => e.event === 'resource.created').map((e) => Number(e.id))).toEqual(Array.from({ length: 100 }, (_, i) => 51 + i));
      expect(last.event).toBe('resource.created');

      const alerts = await until(
        () => small.request('GET', `/v4/realtime/alerts?tenant_id=${tenant.id}`, { as: tenant.member.email }),
        (r) => r.status === 200 && r.body.connections === 1,
      );
      expect(alerts.body).toMatchObject({
        tenantId: tenant.id,
        recording: true,
        lastEventId: '150',
        oldestEventId: '51',
        retention: 100,
        connections: 1,
        instances: 1,
        dropped: { events: 40, lastAt: expect.any(String) },
      });
      expect(alerts.body.alerts.map((a: any) => a.code)).toContain('EVENTS_DROPPED');
      stream.close();
      const after = await until(
        () => small.request('GET', `/v4/realtime/alerts?tenant_id=${tenant.id}`, { as: tenant.member.email }),
        (r) => r.status === 200 && r.body.connections === 0,
      );
      expect(after.body.instances).toBe(0);
    } finally {
      await small.close();
    }
  });

  it('refuses a tenant without the realtime capability, naming it, at negotiation and at connection', async () => {
    const refused = await negotiate(free, ['resources']);
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('capability realtime is not available to this tenant');

    const negotiated = await negotiate(south, ['resources']);
    const off = await stack.request('PUT', `/v4/platform/capabilities/overrides/${south.id}/realtime`, { as: PLATFORM_ADMIN, body: { allowed: false, reason: 'paused' } });
    expect(off.status).toBe(200);
    try {
      const connection = await connect(negotiated.body.url);
      expect(connection.status).toBe(403);
      expect(connection.error.error.message).toContain('capability realtime');
    } finally {
      await stack.request('DELETE', `/v4/platform/capabilities/overrides/${south.id}/realtime`, { as: PLATFORM_ADMIN });
    }
  });

  it("refuses a connection past the plan's maxConnections with 429", async () => {
    const limited = await createTenantFixture(sql, 'rt-limit', { plan: 'team' });
    const devUsers = [...DEV_USERS, limited.admin, limited.member];
    const own = await startTestStack({ devUsers, worker: false });
    try {
      const set = await own.request('PUT', `/v4/platform/capabilities/overrides/${limited.id}/realtime`, {
        as: PLATFORM_ADMIN,
        body: { allowed: true, limits: { maxConnections: 1 }, reason: 'one connection' },
      });
      expect(set.status).toBe(200);
      const url = (await own.request('POST', '/v4/realtime/negotiate', { as: limited.member.email, body: { tenant_id: limited.id, channels: ['resources'] } })).body.url;
      const first = await connect(url);
      streams.push(first);
      expect(first.status).toBe(200);
      const second = await connect(url);
      expect(second.status).toBe(429);
      expect(second.error.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { limit: 1 }, retryAfter: 30 });
      first.close();
      // A token opens one connection: the next one is negotiated anew.
      const again = async () => connect((await own.request('POST', '/v4/realtime/negotiate', { as: limited.member.email, body: { tenant_id: limited.id, channels: ['resources'] } })).body.url);
      await until(again, (s) => (s.status === 200 ? (streams.push(s), true) : false));
    } finally {
      await own.close();
    }
  });

  it.each<[string, string, unknown, number, string?]>([
    ['no channels', 'POST', { channels: [] }, 400, 'channels'],
    ['an unknown channel', 'POST', { channels: ['orders'] }, 400, 'channels.0'],
    ['a resource channel without an id', 'POST', { channels: ['resources:note:42'] }, 400, 'channels.0'],
    ['an unknown field', 'POST', { channels: ['resources'], since: 1 }, 400, 'since'],
  ])('refuses a negotiation with %s', async (_label, method, body, status, field) => {
    const response = await stack.request(method, '/v4/realtime/negotiate', { as: north.member.email, body: { tenant_id: north.id, ...(body as object) } });
    expect(response.status, JSON.stringify(response.body)).toBe(status);
    expect(response.body.error.details.field).toBe(field);
  });

  it('refuses a connection without a token, with a token that is none, or resuming after no event id', async () => {
    for (const [query, headers, status] of [
      ['', {}, 401],
      ['?token=not-a-token', {}, 401],
      ['?token=a.b.c', {}, 401],
    ] as const) {
      const response = await stack.request('GET', `/v4/realtime/connect${query}`, { headers });
      expect(response.status, JSON.stringify(response.body)).toBe(status);
    }
    const { url } = (await negotiate(north, ['resources'])).body;
    const bad = await connect(url, { 'last-event-id': 'yesterday' });
    expect(bad.status).toBe(400);
    expect(bad.error.error.details.field).toBe('last_event_id');
    expect((await stack.request('GET', `/v4/realtime/alerts?tenant_id=${north.id}&verbose=1`, { as: north.member.email })).status).toBe(400);
    expect((await stack.request('GET', `/v4/realtime/alerts?tenant_id=${north.id}`, { as: GLOBEX_ADMIN })).status).toBe(403);
  });
});

/**
 * v4 realtime access over a connection's life: a member who loses access loses the open stream; a
 * connection token opens one connection only; the signing keys rotate with an overlap.
 */
describe('v4 realtime: access, one-time tickets and signing keys', () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let other: TestStack;
  let east: TenantFixture;
  let west: TenantFixture;
  let doomed: TenantFixture;
  let leaving: TenantFixture;
  let paused: TenantFixture;
  const streams: EventStream[] = [];
  const data = (event: EventSourceMessage) => JSON.parse(event.data);
  const userIdOf = async (email: string): Promise<string> => (await stack.request('GET', '/v4/identity/me', { as: email })).body.id;

  const negotiate = async (tenant: TenantFixture, as = tenant.member.email, on = stack): Promise<{ token: string; url: string }> => {
    const negotiated = await on.request('POST', '/v4/realtime/negotiate', { as, body: { tenant_id: tenant.id, channels: ['resources'] } });
    expect(negotiated.status, JSON.stringify(negotiated.body)).toBe(200);
    return negotiated.body;
  };
  /** Connects to `on` (default the first instance) with the negotiated URL's path and query. */
  const connectTo = async (url: string, on = stack): Promise<EventStream> => {
    const { pathname, search } = new URL(url);
    const stream = await connect(`${on.url}${pathname}${search}`);
    streams.push(stream);
    return stream;
  };
  const rotate = (body: Record<string, unknown> = {}) => stack.request('POST', '/v4/platform/realtime/signing-keys/rotate', { as: PLATFORM_ADMIN, body });

  beforeAll(async () => {
    east = await createTenantFixture(sql, 'rt-east', { plan: 'team' });
    west = await createTenantFixture(sql, 'rt-west', { plan: 'team' });
    doomed = await createTenantFixture(sql, 'rt-doomed', { plan: 'team' });
    leaving = await createTenantFixture(sql, 'rt-leaving', { plan: 'team' });
    paused = await createTenantFixture(sql, 'rt-paused', { plan: 'team' });
    const devUsers = [...DEV_USERS, ...[east, west, doomed, leaving, paused].flatMap((t) => [t.admin, t.member])];
    stack = await startTestStack({ devUsers });
    other = await startTestStack({ devUsers, worker: false });
  });
  afterAll(async () => {
    for (const stream of streams) stream.close();
    await sql.end();
    await other?.close();
    await stack?.close();
  });

  it("ends a removed member's open stream with a revoked event, and refuses the member's next connection", async () => {
    const { url } = await negotiate(east);
    const stream = await connectTo(url);
    expect(stream.status, JSON.stringify(stream.error)).toBe(200);
    await stream.next((e) => e.event === 'ready');
    const unused = await negotiate(east);
    // No route removes one member today: the membership ends as an administrator's tool would end it.
    await sql`update memberships set status = 'inactive' where tenant_id = ${east.id}::uuid and user_id = (select id from users where email = ${east.member.email})`;
    const revoked = await stream.next((e) => e.event === 'revoked');
    expect(data(revoked).reason).toContain('membership');
    await until(async () => stream.events.length, () => stream.events.at(-1) === revoked);
    // A token negotiated before the removal opens nothing now.
    const refused = await connectTo(unused.url);
    expect(refused.status).toBe(403);
    expect(refused.error.error.code).toBe('FORBIDDEN');
    // The admin's stream of the same tenant goes on.
    const admin = await connectTo((await negotiate(east, east.admin.email)).url);
    expect(admin.status).toBe(200);
    await admin.next((e) => e.event === 'ready');
  });

  it("ends the stream of a member an administrator removes (DELETE /v4/platform/tenants/:id/users/:oid) within seconds, on every instance, and the member's token no longer reaches the tenant", async () => {
    const memberId = await userIdOf(leaving.member.email);
    const here = await connectTo((await negotiate(leaving)).url);
    const there = await connectTo((await negotiate(leaving)).url, other);
    for (const stream of [here, there]) {
      expect(stream.status, JSON.stringify(stream.error)).toBe(200);
      await stream.next((e) => e.event === 'ready');
    }
    expect((await stack.request('GET', `${DATA}/${leaving.id}/project`, { as: leaving.member.email })).status).toBe(200);
    // A member cannot remove anyone; another tenant's administrator cannot remove this tenant's members.
    expect((await stack.request('DELETE', `/v4/platform/tenants/${leaving.id}/users/${memberId}`, { as: leaving.member.email })).status).toBe(403);
    expect((await stack.request('DELETE', `/v4/platform/tenants/${leaving.id}/users/${memberId}`, { as: east.admin.email })).status).toBe(403);

    const removedAt = Date.now();
    const removed = await stack.request('DELETE', `/v4/platform/tenants/${leaving.id}/users/${memberId}`, { as: leaving.admin.email });
    expect(removed.status, JSON.stringify(removed.body)).toBe(204);
    for (const stream of [here, there]) {
      const revoked = await stream.next((e) => e.event === 'revoked');
      expect(data(revoked).reason).toContain('membership');
    }
    // The check runs every 3 s on each instance: both streams ended well within seconds.
    expect(Date.now() - removedAt).toBeLessThan(10_000);
    // The member's token no longer reaches the tenant: at once on the instance that removed them, within the callers' cache on the other.
    const refused = await stack.request('GET', `${DATA}/${leaving.id}/project`, { as: leaving.member.email });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
    await until(async () => (await other.request('GET', `${DATA}/${leaving.id}/project`, { as: leaving.member.email })).status, (status) => status === 403);
    expect((await stack.request('POST', '/v4/realtime/negotiate', { as: leaving.member.email, body: { tenant_id: leaving.id, channels: ['resources'] } })).status).toBe(403);
    // Removing them again finds no one; the last administrator cannot be removed.
    expect((await stack.request('DELETE', `/v4/platform/tenants/${leaving.id}/users/${memberId}`, { as: leaving.admin.email })).status).toBe(404);
    const adminId = await userIdOf(leaving.admin.email);
    const last = await stack.request('DELETE', `/v4/platform/tenants/${leaving.id}/users/${adminId}`, { as: leaving.admin.email });
    expect(last.status).toBe(409);
    expect(last.body.error.message).toContain('last administrator');
  });

  it('ends the open streams of a tenant whose realtime capability a platform administrator withdraws, within seconds', async () => {
    const member = await connectTo((await negotiate(paused)).url);
    const admin = await connectTo((await negotiate(paused, paused.admin.email)).url, other);
    for (const stream of [member, admin]) {
      expect(stream.status, JSON.stringify(stream.error)).toBe(200);
      await stream.next((e) => e.event === 'ready');
    }
    const westStream = await connectTo((await negotiate(west)).url);
    await westStream.next((e) => e.event === 'ready');
    const withdrawnAt = Date.now();
    const off = await stack.request('PUT', `/v4/platform/capabilities/overrides/${paused.id}/realtime`, { as: PLATFORM_ADMIN, body: { allowed: false, reason: 'withdrawn' } });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    for (const stream of [member, admin]) {
      const revoked = await stream.next((e) => e.event === 'revoked');
      expect(data(revoked).reason).toContain('capability');
    }
    expect(Date.now() - withdrawnAt).toBeLessThan(10_000);
    // Another tenant's stream goes on.
    expect(westStream.events.some((e) => e.event === 'revoked')).toBe(false);
    const refused = await stack.request('POST', '/v4/realtime/negotiate', { as: paused.member.email, body: { tenant_id: paused.id, channels: ['resources'] } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('capability realtime');
  });

  it('ends every stream of a tenant its administrator deletes (POST /v4/platform/tenants/:id/delete)', async () => {
    const memberStream = await connectTo((await negotiate(doomed)).url, other);
    expect(memberStream.status).toBe(200);
    await memberStream.next((e) => e.event === 'ready');
    const deleted = await stack.request('POST', `/v4/platform/tenants/${doomed.id}/delete`, { as: doomed.admin.email });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(204);
    const revoked = await memberStream.next((e) => e.event === 'revoked');
    expect(data(revoked).reason).toContain('membership');
  });

  it('opens one connection per token: a replay is refused with 401 on every instance, open or closed', async () => {
    const { url } = await negotiate(west);
    const first = await connectTo(url);
    expect(first.status).toBe(200);
    await first.next((e) => e.event === 'ready');
    for (const on of [stack, other]) {
      const replay = await connectTo(url, on);
      expect(replay.status).toBe(401);
      expect(replay.error.error).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringContaining('already been used') });
      assertConforms({ method: 'GET', path: '/v4/realtime/connect', status: replay.status, headers: replay.headers, body: replay.error });
    }
    first.close();
    const afterClose = await connectTo(url, other);
    expect(afterClose.status).toBe(401);
    // Sent twice at once, a fresh token opens one connection.
    const fresh = await negotiate(west);
    const both = await Promise.all([connectTo(fresh.url), connectTo(fresh.url, other)]);
    expect(both.map((s) => s.status).sort()).toEqual([200, 401]);
    // The consumed tickets are recorded with their expiry, for every instance to see.
    const [{ jti, exp }] = [decodeJwt(fresh.token)] as [{ jti: string; exp: number }];
    const [row] = await sql<{ expiresAt: Date }[]>`select expires_at as "expiresAt" from realtime_tickets where jti = ${jti}::uuid`;
    expect(row?.expiresAt.getTime()).toBe(exp * 1000);
  });

  it('verifies a token signed with the previous key during the overlap and signs new ones with the new key', async () => {
    const before = await negotiate(west);
    const beforeOther = await negotiate(west, west.member.email, other);
    const rotated = await rotate();
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    const previousKid = decodeProtectedHeader(before.token).kid;
    expect(previousKid).toEqual(expect.any(String));
    expect(rotated.body.kid).not.toBe(previousKid);
    expect(rotated.body.verifying).toContainEqual({ kid: previousKid, retiresAt: expect.any(String) });
    expect(Date.parse(rotated.body.verifying.find((k: any) => k.kid === previousKid).retiresAt)).toBeGreaterThan(Date.now());
    const after = await negotiate(west, west.member.email, other);
    expect(decodeProtectedHeader(after.token).kid).toBe(rotated.body.kid);
    for (const [token, on] of [[before, other], [beforeOther, stack], [after, stack]] as const) {
      const stream = await connectTo(token.url, on);
      expect(stream.status, JSON.stringify(stream.error)).toBe(200);
      await stream.next((e) => e.event === 'ready');
    }
    // No tenant or user below the platform rotates the keys.
    expect((await stack.request('POST', '/v4/platform/realtime/signing-keys/rotate', { as: west.admin.email, body: {} })).status).toBe(403);
  });

  it('refuses a token signed with a retired key', async () => {
    const before = await negotiate(west);
    const spare = await negotiate(west, west.member.email, other);
    const rotated = await rotate({ retirePrevious: true });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    expect(rotated.body.verifying).toEqual([]);
    for (const [token, on] of [[before, stack], [spare, other]] as const) {
      const refused = await connectTo(token.url, on);
      expect(refused.status).toBe(401);
      expect(refused.error.error.message).toContain('retired');
    }
    // A well-formed, unexpired token under the retired key (as one who stole that key would make it) opens nothing.
    const kid = decodeProtectedHeader(before.token).kid!;
    const [{ sealedSecret }] = await sql<[{ sealedSecret: string }]>`select sealed_secret as "sealedSecret" from realtime_signing_keys where id = ${Number(kid)}`;
    const secret = Buffer.from(createSecretBox(devSecretsKey()).open(sealedSecret, `realtime_signing_keys.secret:${kid}`), 'base64');
    const claims = decodeJwt(before.token);
    const forged = await new SignJWT({ ...claims, jti: randomUUID() }).setProtectedHeader({ alg: 'HS256', kid }).sign(new Uint8Array(secret));
    const stolen = await connect(`${stack.url}/v4/realtime/connect`, { authorization: `Bearer ${forged}` });
    expect(stolen.status).toBe(401);
    expect(stolen.error.error.message).toContain('retired');
    const fresh = await connectTo((await negotiate(west)).url, other);
    expect(fresh.status).toBe(200);
  });

  it('stores the signing keys sealed with the operator key, seals a key an earlier version stored in plain text when an instance starts, and verifies tokens across a rotation', async () => {
    const box = createSecretBox(devSecretsKey());
    const before = await negotiate(west);
    const kid = decodeProtectedHeader(before.token).kid!;
    const [row] = await sql<{ secret: Buffer | null; sealedSecret: string }[]>`select secret, sealed_secret as "sealedSecret" from realtime_signing_keys where id = ${Number(kid)}`;
    // Only the sealed form is stored, and it opens (with the operator key and the key's number) to the key that signed the token.
    expect(row?.secret).toBeNull();
    expect(row?.sealedSecret).toMatch(new RegExp(`^sealed:v1:${box.keyId}:`));
    const key = Buffer.from(box.open(row!.sealedSecret, `realtime_signing_keys.secret:${kid}`), 'base64');
    expect(key).toHaveLength(32);
    expect(row!.sealedSecret).not.toContain(key.toString('base64'));
    expect(row!.sealedSecret).not.toContain(key.toString('base64url'));
    await expect(jwtVerify(before.token, new Uint8Array(key))).resolves.toBeDefined();
    expect(() => box.open(row!.sealedSecret, `realtime_signing_keys.secret:${Number(kid) + 1}`)).toThrow();
    // Across a rotation, a token of the sealed key before it and one of the new key both connect.
    const rotated = await rotate();
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    const after = await negotiate(west, west.member.email, other);
    expect(decodeProtectedHeader(after.token).kid).toBe(rotated.body.kid);
    for (const [token, on] of [[before, other], [after, stack]] as const) {
      const stream = await connectTo(token.url, on);
      expect(stream.status, JSON.stringify(stream.error)).toBe(200);
      await stream.next((e) => e.event === 'ready');
    }
    const [newest] = await sql<{ secret: Buffer | null; sealedSecret: string }[]>`select secret, sealed_secret as "sealedSecret" from realtime_signing_keys where id = ${Number(rotated.body.kid)}`;
    expect(newest?.secret).toBeNull();
    expect(newest?.sealedSecret).toMatch(/^sealed:v1:/);

    // A key an earlier version stored in plain text (still verifying), and a token it signed.
    const plain = randomBytes(32);
    const [{ id }] = await sql<[{ id: number }]>`
      insert into realtime_signing_keys (id, secret, retires_at) select max(id) + 1, ${plain}, now() + interval '10 minutes' from realtime_signing_keys returning id`;
    const token = await new SignJWT({ tid: west.id, ch: ['resources'] })
      .setProtectedHeader({ alg: 'HS256', kid: String(id) })
      .setIssuer('svc-realtime')
      .setAudience('svc-realtime-connect')
      .setSubject(await userIdOf(west.member.email))
      .setJti(randomUUID())
      .setIssuedAt()
      .setExpirationTime('60s')
      .sign(plain);
    const devUsers = [...DEV_USERS, ...[east, west, doomed, leaving, paused].flatMap((t) => [t.admin, t.member])];
    const third = await startTestStack({ devUsers, worker: false });
    try {
      const [migrated] = await sql<{ secret: Buffer | null; sealedSecret: string | null }[]>`select secret, sealed_secret as "sealedSecret" from realtime_signing_keys where id = ${id}`;
      expect(migrated?.secret).toBeNull();
      expect(Buffer.from(box.open(migrated!.sealedSecret!, `realtime_signing_keys.secret:${id}`), 'base64').equals(plain)).toBe(true);
      const stream = await connect(`${third.url}/v4/realtime/connect?token=${token}`);
      streams.push(stream);
      expect(stream.status, JSON.stringify(stream.error)).toBe(200);
      await stream.next((e) => e.event === 'ready');
    } finally {
      await third.close();
    }
  });

  it('keeps the signing keys and the consumed tickets from tenant connections (svc_app)', async () => {
    const tenantLogin = postgres(inject('tenantDatabaseUrl'), { max: 1, onnotice: () => {} });
    try {
      for (const table of ['realtime_signing_keys', 'realtime_tickets']) {
        const outcome = await tenantLogin.begin(async (tx) => {
          await tx`select set_config('role', 'svc_app', true)`;
          await tx`select set_config('svc.tenant_id', ${west.id}, true)`;
          return tx
            .savepoint((sp) => sp.unsafe(`select * from ${table}`))
            .then(
              () => 'read',
              (error: { code?: string }) => error.code,
            );
        });
        expect(outcome, table).toBe('42501');
      }
    } finally {
      await tenantLogin.end();
    }
  });
});
