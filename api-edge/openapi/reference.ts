import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Elysia } from 'elysia';
import { errorBody } from '../errors.ts';
import { DOCS_CLIENT_ID } from '../identity/provider-routes.ts';
import { V3_BASE, V4_BASE } from '../routes/bases.ts';
import { openApiJson } from './document.ts';

/** Where the documents are served; neither is authenticated (api-edge/app.ts). */
export const OPENAPI_PATHS = { v3: `${V3_BASE}/openapi.json`, v4: `${V4_BASE}/openapi.json` } as const;
const DOCUMENT_PATHS = new Set<string>(Object.values(OPENAPI_PATHS));

/** Whether a request asks for one of the OpenAPI documents. */
export const isOpenApiDocument = (method: string, pathname: string) => method === 'GET' && DOCUMENT_PATHS.has(pathname);

/**
 * The reference page's policy: scripts, styles, fonts and calls from this origin only, never
 * framed. Two exceptions that load nothing from elsewhere: the icons swagger-ui.css embeds as
 * `data:` images, and the one `<style>` element of Swagger UI's logo, allowed by its hash (a new
 * swagger-ui-dist that changes it shows as a policy violation in test/e2e/openapi.test.ts). Swagger
 * UI's React sets other styles through the DOM, which style-src does not govern.
 */
const SWAGGER_LOGO_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";
export const DOCS_CSP = `default-src 'none'; script-src 'self'; style-src 'self' ${SWAGGER_LOGO_STYLE}; img-src 'self' data:; font-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

/** Files of the `swagger-ui-dist` package the page loads, with their media types. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'oauth2-redirect.html': 'text/html; charset=utf-8',
  'oauth2-redirect.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>API reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/swagger-ui-standalone-preset.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

/**
 * Starts Swagger UI on both documents (`?api=v4` opens v4), with the built-in provider's docs
 * client for Authorize (authorization code with PKCE). A file of its own: the policy allows no
 * inline script.
 */
const INIT = `window.addEventListener('load', function () {
  var api = new URLSearchParams(window.location.search).get('api') === 'v4' ? 'v4' : 'v3';
  var urls = [
    { url: ${JSON.stringify(OPENAPI_PATHS.v3)}, name: 'v3' },
    { url: ${JSON.stringify(OPENAPI_PATHS.v4)}, name: 'v4' }
  ];
  window.ui = SwaggerUIBundle({
    urls: urls,
    'urls.primaryName': api,
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: false,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout',
    oauth2RedirectUrl: window.location.origin + '/docs/oauth2-redirect.html'
  });
  window.ui.initOAuth({ clientId: ${JSON.stringify(DOCS_CLIENT_ID)}, usePkceWithAuthorizationCodeGrant: true, scopes: 'openid email profile' });
});
`;

const assetDir = () => dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const cache = new Map<string, Promise<Uint8Array>>();

function asset(name: string): Promise<Uint8Array> {
  let bytes = cache.get(name);
  if (!bytes) {
    cache.set(name, (bytes = readFile(join(assetDir(), name))));
    bytes.catch(() => cache.delete(name));
  }
  return bytes;
}

const page = (body: string | Uint8Array, contentType: string, cacheControl = 'no-cache') =>
  new Response(body, { headers: { 'content-type': contentType, 'cache-control': cacheControl, 'content-security-policy': DOCS_CSP } });

/**
 * The OpenAPI documents of v3 and v4, and the reference page at `/docs` (Swagger UI, served from
 * the `swagger-ui-dist` package: no CDN).
 */
export function apiReferenceRoutes() {
  return new Elysia({ name: 'api-reference' })
    .get(OPENAPI_PATHS.v3, () => new Response(openApiJson('v3'), { headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' } }))
    .get(OPENAPI_PATHS.v4, () => new Response(openApiJson('v4'), { headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' } }))
    .get('/docs', () => page(PAGE, 'text/html; charset=utf-8'))
    .get('/docs/init.js', () => page(INIT, 'text/javascript; charset=utf-8'))
    .get('/docs/:file', async ({ params, set }) => {
      const type = Object.hasOwn(ASSETS, params.file) ? ASSETS[params.file] : undefined;
      if (!type) {
        set.status = 404;
        return errorBody('NOT_FOUND', `no file ${params.file} in /docs`);
      }
      return page(await asset(params.file), type, 'public, max-age=3600');
    });
}
