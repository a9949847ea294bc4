import { CliError } from '../errors.ts';

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Record<string, string>;
  body: T;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined> | Array<[string, string]>;
  body?: unknown;
  headers?: Record<string, string>;
  /** What a 404 means, for E202's `{resource}` (default: the path). */
  subject?: string;
  /** False: the call needs no bearer token (`GET /health`). */
  auth?: boolean;
  /** A body sent as it is (a file's bytes), instead of `body` as JSON. */
  raw?: { body: ReadableStream<Uint8Array> | Uint8Array; contentType: string; length?: number };
  /**
   * `bytes`: the answer's body is returned as bytes, not parsed. `stream`: a successful answer's
   * body is returned unread, as a stream (the time limit then covers only the wait for the headers).
   */
  response?: 'bytes' | 'stream';
  /** Ends the call, and the reading of a streamed answer, when aborted. */
  signal?: AbortSignal;
}

export interface ApiClient {
  readonly baseUrl: string;
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
}

interface PlatformErrorBody {
  error?: { code?: string; message?: string; details?: Record<string, unknown> };
}

const TIMEOUT_MS = 30_000;
const UPLOAD_TIMEOUT_MS = 30 * 60_000;

/** The platform's error text with its details (`field: issue`, a current version), for `{details}`. */
function describePlatformError(status: number, body: unknown): string {
  // The platform's `{error: {message}}`; other services' `{message}` (a code host's).
  const other = (body as { message?: unknown } | undefined)?.message;
  const error = (body as PlatformErrorBody | undefined)?.error ?? (typeof other === 'string' ? ({ message: other }) : undefined);
  if (!error?.message) return typeof body === 'string' && body ? `${status} ${body.slice(0, 200)}` : `HTTP ${status}`;
  const details = error.details ?? {};
  const extra: string[] = [];
  if (typeof details['field'] === 'string') extra.push(`${details['field']}${typeof details['issue'] === 'string' ? `: ${details['issue']}` : ''}`);
  if (details['currentVersion'] !== undefined) extra.push(`current version ${String(details['currentVersion'])}`);
  const message = error.message.replace(/\.$/, '');
  return extra.length && !extra.every((e) => message.includes(e)) ? `${message} (${extra.join('; ')})` : message;
}

/** The client's code for a platform failure. */
export function errorFromResponse(status: number, body: unknown, subject: string): CliError {
  const details = describePlatformError(status, body);
  const code = (body as PlatformErrorBody | undefined)?.error?.code;
  switch (status) {
    case 400:
      return code === 'VALIDATION_ERROR' ? new CliError('E302', { details }) : new CliError('E305', { details });
    case 401:
      return new CliError('E103');
    case 403:
      return new CliError('E204');
    case 404:
      return new CliError('E202', { resource: subject });
    case 409:
      return new CliError('E205', { details });
    case 428:
      return new CliError('E303', { field: 'version' });
    default:
      return new CliError('E203', { details: `${status} ${details}` });
  }
}

/** Whether a JWT's `exp` has passed (false when the token is not a JWT or has no `exp`). */
export function tokenExpired(token: string, now = Date.now()): boolean {
  const exp = jwtClaims(token)?.['exp'];
  return typeof exp === 'number' && exp * 1000 <= now;
}

export function jwtClaims(token: string): Record<string, unknown> | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

async function fetchFunction(): Promise<typeof fetch> {
  const env = process.env;
  const proxied = env['HTTPS_PROXY'] ?? env['https_proxy'] ?? env['HTTP_PROXY'] ?? env['http_proxy'];
  if (!proxied) return fetch;
  const undici = await import('undici');
  const dispatcher = new undici.EnvHttpProxyAgent();
  return ((input: string, init: RequestInit) => undici.fetch(input, { ...(init as object), dispatcher })) as unknown as typeof fetch;
}

/**
 * A v4 client: sends the bearer token, parses JSON answers and turns every failure into the
 * client's error codes (401 E103 or E102, 403 E204, 404 E202, 409 E205, 400 E302/E305, network E201).
 * `token` undefined means not logged in: calls that need it fail with E101 before any request.
 */
export function createApiClient(options: { baseUrl: string; token?: string; debug?: (line: string) => void }): ApiClient {
  const { baseUrl, token, debug } = options;
  let fetching: Promise<typeof fetch> | undefined;
  return {
    baseUrl,
    async request<T>(method: string, path: string, request: RequestOptions = {}): Promise<ApiResponse<T>> {
      if (request.auth !== false) {
        if (!token) throw new CliError('E101');
        if (tokenExpired(token)) throw new CliError('E102');
      }
      const url = new URL(baseUrl + path);
      const entries = Array.isArray(request.query) ? request.query : Object.entries(request.query ?? {});
      for (const [name, value] of entries) if (value !== undefined) url.searchParams.append(name, String(value));
      const headers: Record<string, string> = { accept: 'application/json', ...request.headers };
      if (request.auth !== false && token) headers['authorization'] = `Bearer ${token}`;
      let body: string | ReadableStream<Uint8Array> | Uint8Array | undefined;
      if (request.raw) {
        headers['content-type'] = request.raw.contentType;
        if (request.raw.length !== undefined) headers['content-length'] = String(request.raw.length);
        body = request.raw.body;
      } else if (request.body !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(request.body);
      }
      debug?.(`${method} ${url.pathname}${url.search}`);
      let response: Response;
      const deadline = new AbortController();
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        fetching ??= fetchFunction();
        // A streamed body goes out as it is read (`duplex: 'half'`); uploads get longer than other calls.
        const limit = request.raw ? UPLOAD_TIMEOUT_MS : TIMEOUT_MS;
        const init = { method, headers, body, signal: request.signal ? AbortSignal.any([request.signal, deadline.signal]) : deadline.signal, duplex: 'half' };
        timer = setTimeout(() => deadline.abort(new DOMException(`no answer within ${limit / 1000} s`, 'TimeoutError')), limit).unref();
        response = await (await fetching)(url.toString(), init as RequestInit);
      } catch (error) {
        clearTimeout(timer);
        throw new CliError('E201', { url: baseUrl }, { cause: error });
      }
      if (request.response === 'stream' && response.ok && response.body) {
        clearTimeout(timer);
        debug?.(`-> ${response.status} (streamed)`);
        return { status: response.status, headers: Object.fromEntries(response.headers), body: response.body as T };
      }
      if (request.response === 'bytes' && response.ok) {
        const bytes = new Uint8Array(await response.arrayBuffer());
        clearTimeout(timer);
        debug?.(`-> ${response.status}`);
        return { status: response.status, headers: Object.fromEntries(response.headers), body: bytes as T };
      }
      const text = await response.text();
      clearTimeout(timer);
      let parsed: unknown = text;
      if (text && (response.headers.get('content-type') ?? '').includes('json')) {
        try {
          parsed = JSON.parse(text);
        } catch {
          // keep the text
        }
      } else if (!text) {
        parsed = undefined;
      }
      debug?.(`-> ${response.status}`);
      if (!response.ok) {
        if (response.status === 401 && token && tokenExpired(token)) throw new CliError('E102');
        throw errorFromResponse(response.status, parsed, request.subject ?? path);
      }
      return { status: response.status, headers: Object.fromEntries(response.headers), body: parsed as T };
    },
  };
}
