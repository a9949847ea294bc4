import sodium from 'libsodium-wrappers';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { asyncListener } from '../harness/async-listener.ts';

/**
 * A code host for the deploy tests: an HTTP server implementing the endpoints of GitHub's
 * documented Actions REST API that `svc deploy` calls, for one repository, and recording what it
 * receives. No code host is reachable from the tests, so this stands in for one; it checks
 * requests as the documentation describes them:
 * - every call: `Authorization: Bearer <token>` (else 401 "Bad credentials"), `Accept:
 *   application/vnd.github+json`, `X-GitHub-Api-Version: 2022-11-28`, a `User-Agent`;
 * - `GET /repos/{owner}/{repo}/actions/secrets/public-key`: `{key_id, key}`, a Curve25519 public
 *   key (base64) of a key pair made here;
 * - `PUT /repos/{owner}/{repo}/actions/secrets/{name}` with `{encrypted_value, key_id}`: the value
 *   must be a sealed box this server opens with its key pair (else 422); 201 when created, 204 when updated;
 * - `POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches` with `{ref}`: 204, and
 *   a queued run; 404 for an unknown workflow, 422 "No ref found for: <ref>" for an unknown branch;
 * - `GET /repos/{owner}/{repo}/actions/runs`: `{total_count, workflow_runs}`, newest first.
 */
export interface CodeHost {
  url: string;
  token: string;
  /** The secrets as the server opened them, by name. */
  secrets: Map<string, string>;
  /** Each request: method, path, headers, parsed body. */
  requests: Array<{ method: string; path: string; headers: IncomingMessage['headers']; body: unknown }>;
  close(): Promise<void>;
}

export async function startCodeHost(options: { owner: string; repo: string; workflows: string[]; branches: string[]; token: string }): Promise<CodeHost> {
  await sodium.ready;
  const keys = sodium.crypto_box_keypair();
  const keyId = '568250167242549743';
  const secrets = new Map<string, string>();
  const requests: CodeHost['requests'] = [];
  const runs: Array<Record<string, unknown>> = [];
  const base = `/repos/${options.owner}/${options.repo}`;
  let nextRun = 30433642;

  const send = (res: ServerResponse, status: number, body?: unknown) => {
    if (body === undefined) return res.writeHead(status).end();
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
  };
  const fail = (res: ServerResponse, status: number, message: string) => send(res, status, { message, documentation_url: 'https://docs.github.com/rest', status: String(status) });

  const server = createServer(asyncListener(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      return fail(res, 400, 'Problems parsing JSON');
    }
    const url = new URL(req.url!, 'http://code-host');
    requests.push({ method: req.method!, path: url.pathname + url.search, headers: req.headers, body });
    if (req.headers.authorization !== `Bearer ${options.token}`) return fail(res, 401, 'Bad credentials');
    if (req.headers.accept !== 'application/vnd.github+json' || req.headers['x-github-api-version'] !== '2022-11-28' || !req.headers['user-agent']) {
      return fail(res, 400, 'Send Accept: application/vnd.github+json, X-GitHub-Api-Version: 2022-11-28 and a User-Agent');
    }
    if (!url.pathname.startsWith(`${base}/`)) return fail(res, 404, 'Not Found');
    const rest = url.pathname.slice(base.length);
    if (req.method === 'GET' && rest === '/actions/secrets/public-key') return send(res, 200, { key_id: keyId, key: sodium.to_base64(keys.publicKey, sodium.base64_variants.ORIGINAL) });
    const secret = /^\/actions\/secrets\/([A-Za-z_][A-Za-z0-9_]*)$/.exec(rest);
    if (req.method === 'PUT' && secret) {
      const { encrypted_value: sealed, key_id: usedKey } = (body ?? {}) as { encrypted_value?: string; key_id?: string };
      if (usedKey !== keyId || typeof sealed !== 'string') return fail(res, 422, 'Invalid request: encrypted_value and the current key_id are required');
      let opened: string;
      try {
        opened = sodium.to_string(sodium.crypto_box_seal_open(sodium.from_base64(sealed, sodium.base64_variants.ORIGINAL), keys.publicKey, keys.privateKey));
      } catch {
        return fail(res, 422, 'Invalid request: encrypted_value is not a sealed box for this repository key');
      }
      const existed = secrets.has(secret[1]!);
      secrets.set(secret[1]!, opened);
      return send(res, existed ? 204 : 201, existed ? undefined : {});
    }
    const dispatch = /^\/actions\/workflows\/([^/]+)\/dispatches$/.exec(rest);
    if (req.method === 'POST' && dispatch) {
      const workflow = decodeURIComponent(dispatch[1]!);
      if (!options.workflows.includes(workflow)) return fail(res, 404, 'Not Found');
      const ref = (body as { ref?: unknown } | undefined)?.ref;
      if (typeof ref !== 'string') return fail(res, 422, 'Invalid request: "ref" wasn\'t supplied.');
      if (!options.branches.includes(ref)) return fail(res, 422, `No ref found for: ${ref}`);
      runs.unshift({
        id: nextRun++,
        name: workflow.replace(/\.ya?ml$/, ''),
        path: `.github/workflows/${workflow}`,
        head_branch: ref,
        event: 'workflow_dispatch',
        status: 'queued',
        conclusion: null,
        created_at: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        html_url: `https://code-host.test/${options.owner}/${options.repo}/actions/runs/${nextRun - 1}`,
      });
      return send(res, 204);
    }
    if (req.method === 'GET' && rest === '/actions/runs') {
      const perPage = Number(url.searchParams.get('per_page') ?? 30);
      return send(res, 200, { total_count: runs.length, workflow_runs: runs.slice(0, perPage) });
    }
    return fail(res, 404, 'Not Found');
  }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token: options.token,
    secrets,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
