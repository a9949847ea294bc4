import { describe, expect, it } from 'vitest';
import { conformanceProblems } from './conformance.ts';

const RATE = { 'x-ratelimit-limit': '1000', 'x-ratelimit-remaining': '999', 'x-ratelimit-reset': '1700000000' };
const json = (extra: Record<string, string> = {}) => new Headers({ 'content-type': 'application/json', ...RATE, ...extra });
const resource = { id: 'r1', type: 'project', name: 'Apollo', createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-01T00:00:00.000Z' };

describe('response conformance', () => {
  it('accepts a documented answer, matching the route template (a literal segment before a parameter)', () => {
    expect(conformanceProblems({ method: 'GET', path: '/api/svc/v3/resources/project/r1', status: 200, headers: json(), body: resource })).toEqual([]);
    expect(conformanceProblems({ method: 'DELETE', path: '/api/svc/v3/resources/project/r1', status: 204, headers: new Headers(RATE), body: undefined })).toEqual([]);
    expect(conformanceProblems({ method: 'GET', path: '/v4/data/resources/object-types?tenant_id=acme', status: 200, headers: json(), body: { data: [] } })).toEqual([]);
  });

  it('refuses an undocumented status, a body that does not match, and a missing rate-limit header', () => {
    expect(conformanceProblems({ method: 'GET', path: '/api/svc/v3/resources/project/r1', status: 201, headers: json(), body: resource })[0]).toMatch(/status 201 is not documented/);
    expect(conformanceProblems({ method: 'GET', path: '/api/svc/v3/resources/project/r1', status: 200, headers: json(), body: { id: 'r1' } })[0]).toMatch(/does not match getResource/);
    expect(conformanceProblems({ method: 'GET', path: '/v4/identity/me', status: 404, headers: json(), body: { error: { code: 'NOPE', message: 'x' } } })[0]).toMatch(/does not match/);
    expect(conformanceProblems({ method: 'GET', path: '/v4/data/resources/object-types', status: 200, headers: new Headers({ 'content-type': 'application/json' }), body: { data: [] } })).toHaveLength(3);
  });

  it('allows only the error body from a path or method no route documents', () => {
    expect(conformanceProblems({ method: 'GET', path: '/v4/no-such-route', status: 404, headers: json(), body: { error: { code: 'NOT_FOUND', message: 'no route' } } })).toEqual([]);
    expect(conformanceProblems({ method: 'PUT', path: '/v4/identity/me', status: 200, headers: json(), body: {} })[0]).toMatch(/does not describe/);
  });
});
