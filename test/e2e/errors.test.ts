import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, MEMBER, startTestStack, V3, type ApiResponse, type TestStack } from '../harness/stack.ts';

const errorShape = (code: string) => ({ error: expect.objectContaining({ code, message: expect.any(String) }) });


/** A user as /users/me answers, less what other files' sign-ins of the same seeded user move. */
const withoutSignIn = ({ lastLoginAt: _, ...user }: Record<string, unknown>) => user;
describe('v3 errors', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(() => stack?.close());

  it('401 UNAUTHORIZED without a token, with a malformed header, and with a forged token', async () => {
    const token = await stack.token(ADMIN);
    const [header, payload] = token.split('.');
    const forged = `${header}.${payload}.${'A'.repeat(342)}`;
    for (const headers of [{}, { authorization: 'Basic abc' }, { authorization: `Bearer ${forged}` }, { authorization: 'Bearer not-a-jwt' }] as Record<string, string>[]) {
      const response = await stack.request('GET', `${V3}/users/me`, { headers });
      expect(response.status).toBe(401);
      expect(response.body).toEqual(errorShape('UNAUTHORIZED'));
    }
  });

  it('403 FORBIDDEN for a missing permission', async () => {
    const response = await stack.request('GET', `${V3}/users`, { as: MEMBER });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(errorShape('FORBIDDEN'));
  });

  it('400 VALIDATION_ERROR for malformed JSON, and nothing is created', async () => {
    const marker = `malformed-${Date.now()}-${Math.random()}`;
    const response = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, rawBody: `{"name": "${marker}",` });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(errorShape('VALIDATION_ERROR'));
    const after = await stack.request('GET', `${V3}/resources?type=project&filter[name]=${marker}`, { as: ADMIN });
    expect(after.status).toBe(200);
    expect(after.body.total).toBe(0);
  });

  it('400 VALIDATION_ERROR for an empty body declared as JSON, on v3 and v4 alike', async () => {
    for (const path of [`${V3}/resources/project`, '/v4/identity/me/provision']) {
      const response = await stack.request('POST', path, { as: ADMIN, rawBody: '' });
      expect(response.status, path).toBe(400);
      expect(response.body).toEqual({ error: { code: 'VALIDATION_ERROR', message: 'request body is not valid JSON', details: { field: '(body)', issue: 'is not valid JSON' } } });
    }
  });

  it('413 PAYLOAD_TOO_LARGE for a body over 1 MiB, declared or chunked, after authentication; nothing is created', async () => {
    const token = await stack.token(ADMIN);
    const marker = `large-${Date.now()}-${Math.random()}`;
    const large = JSON.stringify({ name: marker, notes: 'x'.repeat(1_048_576) });
    /** The body sent chunked, without a Content-Length. */
    const chunked = (text: string) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          const bytes = new TextEncoder().encode(text);
          for (let at = 0; at < bytes.length; at += 65_536) controller.enqueue(bytes.subarray(at, at + 65_536));
          controller.close();
        },
      });
    const post = (body: string | ReadableStream<Uint8Array>, auth = true) =>
      fetch(`${stack.url}${V3}/resources/project`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${token}` } : {}) },
        body,
        duplex: 'half',
      });

    for (const body of [large, chunked(large)]) {
      const response = await post(body);
      expect(response.status).toBe(413);
      expect(await response.json()).toEqual({ error: { code: 'PAYLOAD_TOO_LARGE', message: 'request body is larger than 1048576 bytes', details: { limit: 1_048_576 } } });
      expect(response.headers.get('x-ratelimit-limit')).toEqual(expect.any(String));
    }
    expect((await post(large, false)).status).toBe(401);
    const after = await stack.request('GET', `${V3}/resources?type=project&filter[name]=${marker}`, { as: ADMIN });
    expect(after.body.total).toBe(0);

    const small = await post(chunked(JSON.stringify({ name: marker, budget: 7 })));
    expect(small.status).toBe(201);
    expect(await small.json()).toMatchObject({ name: marker, budget: 7 });
  });

  it('400 VALIDATION_ERROR on "offset" for an offset beyond what a list can skip, on resources, users and executions', async () => {
    for (const path of [`${V3}/resources?type=project&offset=3000000000`, `${V3}/users?offset=3000000000`, `${V3}/orchestrate/executions?offset=3000000000`]) {
      const response = await stack.request('GET', path, { as: ADMIN });
      expect(response.status, `${path}: ${JSON.stringify(response.body)}`).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'offset' } });
    }
  });

  it('400 VALIDATION_ERROR for text holding the NUL character, which PostgreSQL cannot store; nothing changes', async () => {
    const marker = `nul-${Date.now()}-${Math.random()}`;
    const before = (await stack.request('GET', `${V3}/users/me`, { as: MEMBER })).body;
    const attempts = [
      await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: { name: 'a\u0000b', metadata: { marker } } }),
      await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: { name: marker, metadata: { 'key\u0000': 1 } } }),
      await stack.request('GET', `${V3}/resources?type=project&filter[name]=%00`, { as: ADMIN }),
      await stack.request('GET', `${V3}/resources?type=%00`, { as: ADMIN }),
      await stack.request('GET', `${V3}/users?search=%00`, { as: ADMIN }),
      await stack.request('PATCH', `${V3}/users/me`, { as: MEMBER, body: { name: 'x\u0000' } }),
    ];
    for (const response of attempts) {
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { issue: expect.stringContaining('NUL') } });
    }
    const created = await stack.request('GET', `${V3}/resources?type=project&filter[metadata.marker]=${marker}`, { as: ADMIN });
    expect(created.body.total).toBe(0);
    expect((await stack.request('GET', `${V3}/resources?type=project&filter[name]=${marker}`, { as: ADMIN })).body.total).toBe(0);
    expect(withoutSignIn((await stack.request('GET', `${V3}/users/me`, { as: MEMBER })).body)).toEqual(withoutSignIn(before));
  });

  it('400 VALIDATION_ERROR naming the field for text holding an unpaired surrogate, which is no Unicode text; nothing changes', async () => {
    const marker = `surrogate-${Date.now()}-${Math.random()}`;
    const before = (await stack.request('GET', `${V3}/users/me`, { as: MEMBER })).body;
    const attempts: Array<[ApiResponse, string]> = [
      [await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, rawBody: `{"name":"a\\ud800b","metadata":{"marker":"${marker}"}}` }), 'name'],
      [await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, rawBody: `{"name":"${marker}","metadata":{"\\udc00":1}}` }), 'metadata.\udc00'],
      [await stack.request('PATCH', `${V3}/users/me`, { as: MEMBER, rawBody: '{"preferences":{"theme":"\\ud83d"}}' }), 'preferences.theme'],
      [await stack.request('POST', `${V3}/orchestrate/workflows/project-briefing/execute`, { as: ADMIN, rawBody: '{"input":{"question":"\\udfff"}}' }), 'input.question'],
    ];
    for (const [response, field] of attempts) {
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field, issue: expect.stringContaining('unpaired surrogate') } });
    }
    // A pair is one character: text with an emoji is stored as sent.
    const emoji = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, rawBody: `{"name":"\\ud83d\\ude00 ${marker}","metadata":{"marker":"${marker}"}}` });
    expect(emoji.status, JSON.stringify(emoji.body)).toBe(201);
    expect(emoji.body.name).toBe(`\u{1F600} ${marker}`);
    const listed = await stack.request('GET', `${V3}/resources?type=project&filter[metadata.marker]=${marker}`, { as: ADMIN });
    expect(listed.body.data.map((r: any) => r.name)).toEqual([`\u{1F600} ${marker}`]);
    expect(withoutSignIn((await stack.request('GET', `${V3}/users/me`, { as: MEMBER })).body)).toEqual(withoutSignIn(before));
  });

  it('400 VALIDATION_ERROR naming the field for a __proto__ key, which validated copies of an object drop; no resource is created, the profile is unchanged', async () => {
    const marker = `proto-${Date.now()}-${Math.random()}`;
    const before = (await stack.request('GET', `${V3}/users/me`, { as: MEMBER })).body;
    const attempts: Array<[ApiResponse, string]> = [
      // A query string's filter name becomes a key too: it used to vanish, leaving the list unfiltered.
      [await stack.request('GET', `${V3}/resources?type=project&filter[__proto__]=x`, { as: ADMIN }), 'filter.__proto__'],
      [await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, rawBody: `{"name":"${marker}","metadata":{"marker":"${marker}","__proto__":{"admin":true}}}` }), 'metadata.__proto__'],
      [await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, rawBody: `{"__proto__":{"budget":-1},"name":"${marker}"}` }), '__proto__'],
      [await stack.request('PATCH', `${V3}/users/me`, { as: MEMBER, rawBody: '{"preferences":{"__proto__":{"theme":"dark"}}}' }), 'preferences.__proto__'],
      [await stack.request('POST', `${V3}/orchestrate/workflows/project-briefing/execute`, { as: ADMIN, rawBody: '{"input":{"__proto__":{"question":"q"}}}' }), 'input.__proto__'],
    ];
    for (const [response, field] of attempts) {
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field, issue: expect.stringContaining('__proto__') } });
    }
    expect((await stack.request('GET', `${V3}/resources?type=project&filter[name]=${marker}`, { as: ADMIN })).body.total).toBe(0);
    expect(withoutSignIn((await stack.request('GET', `${V3}/users/me`, { as: MEMBER })).body)).toEqual(withoutSignIn(before));
  });

  it('400 for a body not sent as application/json, which would otherwise be read as no body at all; nothing is created', async () => {
    const marker = `media-${Date.now()}-${Math.random()}`;
    const json = JSON.stringify({ name: marker, metadata: { marker } });
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream', 'Application/JSON', 'application/merge-patch+json']) {
      const response = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, rawBody: json, headers: { 'content-type': contentType } });
      expect(response.status, contentType).toBe(400);
      expect(response.body.error, contentType).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: '(body)', issue: expect.stringContaining('application/json') } });
    }
    // No Content-Type at all (a byte body): the execute would otherwise run with its defaults.
    const bare = await fetch(`${stack.url}${V3}/orchestrate/workflows/project-briefing/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await stack.token(ADMIN)}` },
      body: new TextEncoder().encode('{"input":{"status":"active"}}'),
    });
    expect(bare.status).toBe(400);
    expect(((await bare.json()) as { error: { details: { field: string } } }).error.details.field).toBe('(body)');
    expect((await stack.request('GET', `${V3}/resources?type=project&filter[name]=${marker}`, { as: ADMIN })).body.total).toBe(0);

    const withCharset = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, rawBody: json, headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(withCharset.status, JSON.stringify(withCharset.body)).toBe(201);
  });

  it('400 for a query parameter given twice, rather than one value silently kept', async () => {
    for (const [path, field] of [
      [`${V3}/resources?type=project&sort=-budget&sort=name`, 'sort'],
      [`${V3}/resources?type=project&type=other`, 'type'],
      [`${V3}/resources?type=project&limit=1&limit=2`, 'limit'],
      [`${V3}/users?role=admin&role=member`, 'role'],
      [`${V3}/orchestrate/executions?state=completed&state=failed`, 'state'],
    ] as const) {
      const response = await stack.request('GET', path, { as: ADMIN });
      expect(response.status, path).toBe(400);
      expect(response.body.error, path).toMatchObject({ code: 'VALIDATION_ERROR', details: { field, issue: 'is given more than once' } });
    }
  });

  it('400 for an execute body field other than input, metadata and async, or a workflowId beside the path’s', async () => {
    for (const [rawBody, field] of [
      ['{"inputs":{"status":"x"}}', 'inputs'],
      ['{"input":{},"asnyc":true}', 'asnyc'],
      ['{"workflowId":"active-projects"}', 'workflowId'],
    ] as const) {
      const response = await stack.request('POST', `${V3}/orchestrate/workflows/project-briefing/execute`, { as: ADMIN, rawBody });
      expect(response.status, rawBody).toBe(400);
      expect(response.body.error, rawBody).toMatchObject({ code: 'VALIDATION_ERROR', details: { field } });
    }
  });

  it('400 for a body that is not an object', async () => {
    const response = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: [1, 2] });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: '(body)' } });
  });

  it('404 NOT_FOUND for unknown routes, 405 for a wrong method, both with the error body', async () => {
    const unknown = await stack.request('GET', `${V3}/nothing-here`, { as: ADMIN });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(errorShape('NOT_FOUND'));
    const outside = await stack.request('GET', '/no/such/path');
    expect(outside.status).toBe(404);
    expect(outside.body).toEqual(errorShape('NOT_FOUND'));
    const wrongMethod = await stack.request('DELETE', `${V3}/users/me/`, { as: ADMIN });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.body).toEqual(errorShape('METHOD_NOT_ALLOWED'));
    expect(wrongMethod.headers.get('allow')).toContain('GET');
  });

  it('every API response carries the rate-limit headers', async () => {
    const responses = [
      await stack.request('GET', `${V3}/users/me`, { as: ADMIN }),
      await stack.request('GET', `${V3}/users/me`),
      await stack.request('GET', `${V3}/nothing-here`, { as: ADMIN }),
      await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, rawBody: '{' }),
      await stack.request('GET', `${V3}/resources/project/${'0'.repeat(8)}`, { as: ADMIN }),
    ];
    for (const response of responses) {
      for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
        expect(response.headers.get(name), `${name} on ${response.status}`).toMatch(/^\d+$/);
      }
    }
  });

  it('serves health without authentication', async () => {
    const response = await stack.request('GET', '/health');
    expect(response.status).toBe(200);
    expect(response.body.status).toBe('ok');
  });
});
