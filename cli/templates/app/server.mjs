import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBff } from './lib/bff.mjs';
import { loadEnvFile, required } from './lib/env.mjs';

/**
 * The app's server: the pages in `public/`, and the backend-for-frontend (`lib/bff.mjs`) that
 * signs users in and passes the pages' REST v3 calls to the platform. No dependencies: Node 20 or
 * later runs it as it is. `svc dev` starts it (with `node --watch` unless `--no-turbo`).
 */

const root = fileURLToPath(new URL('.', import.meta.url));
loadEnvFile(join(root, '.env.local'));

const platformUrl = required('BASE_URL_PUBLIC_API');
const bff = createBff({
  platformUrl,
  issuer: process.env.SVC_IDP_ISSUER || platformUrl,
  clientId: required('SVC_IDP_CLIENT_ID'),
  clientSecret: process.env.SVC_IDP_CLIENT_SECRET || undefined,
  scope: process.env.SVC_IDP_SCOPE || 'openid email profile',
  appUrl: process.env.APP_URL || undefined,
});

const publicDir = join(root, 'public');
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.json': 'application/json' };
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};

async function servePage(req, res) {
  let pathname;
  try {
    pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://app.invalid').pathname);
  } catch {
    return notFound(res);
  }
  const file = normalize(join(publicDir, pathname === '/' ? 'index.html' : pathname));
  if (!file.startsWith(publicDir + sep)) return notFound(res);
  try {
    const body = await readFile(file);
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache', ...SECURITY_HEADERS });
    res.end(req.method === 'HEAD' ? undefined : body);
  } catch {
    notFound(res);
  }
}

function notFound(res) {
  res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
  res.end('Not found\n');
}

async function handle(req, res) {
  try {
    if (await bff.handle(req, res)) return;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' });
      return res.end();
    }
    await servePage(req, res);
  } catch (error) {
    console.error(error);
    if (!res.headersSent) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'INTERNAL_ERROR', message: 'the app server failed; see its log' } }));
    } else res.destroy();
  }
}

const port = Number(process.env.PORT || 3000);
// Loopback only unless HOST says otherwise: both addresses, so localhost works whichever one it resolves to.
const hosts = process.env.HOST ? [process.env.HOST] : ['127.0.0.1', '::1'];
let listening = 0;
for (const host of hosts) {
  const server = createServer(handle);
  server.on('error', (error) => {
    if (host === '::1' && hosts.length > 1 && error.code === 'EADDRNOTAVAIL') return;
    console.error(`cannot listen on ${host}:${port}: ${error.message}`);
    process.exit(1);
  });
  server.listen(port, host, () => {
    if (++listening === 1) console.log(`{{appName}} is running at http://localhost:${port} (platform: ${platformUrl})`);
  });
}
