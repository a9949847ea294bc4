import { invalidInput } from '../errors.ts';
import type { HttpMethod } from '../api/wire.ts';
import type { ApiClient } from './api-client.ts';

/** The route families `publicapi` may reach (`verticals/<vertical>` takes any vertical). */
export const ALLOWED_FAMILIES = ['identity', 'platform', 'workflows', 'ai', 'data/resources', 'data/documents', 'geo', 'realtime', 'integrations', 'verticals/<vertical>', 'webhooks'];

/**
 * Checks a `publicapi` path: it must begin with `/v4/`, stay inside one of the allowed families
 * (no `.` or `..` segments, plain or percent-encoded, no fragment) and is returned without its
 * query string, which is returned as parameters. Anything else is E305.
 */
export function checkPath(path: string): { path: string; query: Array<[string, string]> } {
  if (!path.startsWith('/v4/')) throw invalidInput(`path must begin with /v4/: ${path}`);
  if (path.includes('#')) throw invalidInput(`path must not hold a fragment: ${path}`);
  const [pathname = '', search = ''] = path.split(/\?(.*)/s, 2);
  const segments = pathname.slice('/v4/'.length).split('/');
  for (const segment of segments) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw invalidInput(`path has a malformed escape: ${path}`);
    }
    if (decoded === '.' || decoded === '..' || decoded.includes('/') || decoded.includes('\\')) throw invalidInput(`path must not climb out of its route family: ${path}`);
  }
  const [first, second] = segments;
  const allowed =
    (first === 'data' && (second === 'resources' || second === 'documents')) ||
    (first === 'verticals' && !!second) ||
    (!!first && ['identity', 'platform', 'workflows', 'ai', 'geo', 'realtime', 'integrations', 'webhooks'].includes(first));
  if (!allowed) throw invalidInput(`${pathname} is not in an allowed route family (${ALLOWED_FAMILIES.join(', ')})`);
  return { path: pathname, query: [...new URLSearchParams(search)] };
}

/** `key=value` of a `--param`. */
export function parseParam(param: string): [string, string] {
  const at = param.indexOf('=');
  if (at <= 0) throw invalidInput(`--param must be key=value: ${param}`);
  return [param.slice(0, at), param.slice(at + 1)];
}

export interface PublicApiAnswer {
  status: number;
  headers: Record<string, string>;
  /** What the operation answered, whichever it was (null for an answer without a body, 204). */
  body: unknown;
}

/** The path with `{tenantId}` filled, checked, and its parameters (`tenant_id` added when the path has no place for it). */
export function preparePath(rawPath: string, params: Array<[string, string]>, tenantId?: string): { path: string; query: Array<[string, string]> } {
  const filled = tenantId ? rawPath.replace(/\{tenantId\}|:tenantId\b/g, encodeURIComponent(tenantId)) : rawPath;
  const { path, query } = checkPath(filled);
  const all = [...query, ...params];
  if (tenantId && filled === rawPath && !all.some(([k]) => k === 'tenant_id')) all.push(['tenant_id', tenantId]);
  return { path, query: all };
}

/** One call to an allowed v4 path with the caller's token; the platform still authorizes it. */
export function createPublicApiService(api: ApiClient) {
  return {
    async call(method: HttpMethod, rawPath: string, options: { params: Array<[string, string]>; body?: unknown; tenantId?: string }): Promise<PublicApiAnswer> {
      const { path, query } = preparePath(rawPath, options.params, options.tenantId);
      const answer = await api.request<unknown>(method, path, { query, body: options.body, subject: path });
      return { status: answer.status, headers: answer.headers, body: answer.body ?? null };
    },
  };
}
