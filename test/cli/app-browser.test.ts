import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureChromium } from '../../scripts/stack/chromium.ts';
import { ADMIN, startTestStack, V3, type TestStack } from '../harness/stack.ts';
import { freePort } from '../../scripts/stack/process.ts';
import { startSvc, svc, type RunningSvc } from './svc.ts';

/**
 * The app `svc init` scaffolds, run by `svc dev` and used in headless Chromium against the
 * platform: sign-in at the platform's identity provider through the app's backend-for-frontend,
 * the list of the tenant's resources over REST v3, an addition through the page (CSRF token),
 * and sign-out. The app's sign-in client is registered over v4 as `svc provision idp` does.
 */
describe('the scaffolded app in a browser', { timeout: 300_000 }, () => {
  let stack: TestStack;
  let browser: Browser;
  let root: string;
  let server: RunningSvc | undefined;
  let port: number;
  const run = randomBytes(3).toString('hex');
  const key = `web-${run}`;
  const projectName = `Browser project ${run}`;

  beforeAll(async () => {
    const [started, executablePath] = await Promise.all([startTestStack(), ensureChromium({ log: (msg) => process.stderr.write(`[chromium] ${msg}\n`) })]);
    stack = started;
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
    root = await mkdtemp(join(tmpdir(), 'svc-app-'));
    const env = { HOME: root, BASE_URL_PUBLIC_API: stack.url, SVC_TOKEN: await stack.token(ADMIN) };

    const init = await svc(['init', key, '--skip-prompts', '--company-tenant', 'acme'], env, undefined, root);
    expect(init.exitCode, init.stderr).toBe(0);
    expect(init.stdout).toMatch(new RegExp(`^app\\s+created ${key} in tenant acme`, 'm'));
    const project = join(root, key);

    const client = await stack.request('POST', '/v4/platform/provisioning/idp-apps', {
      as: ADMIN,
      body: { tenant_id: 'acme', appKey: key, displayName: key, redirectUris: ['http://localhost/auth/callback', 'http://127.0.0.1/auth/callback'] },
    });
    expect(client.status, JSON.stringify(client.body)).toBe(201);
    const envPath = join(project, '.env.local');
    const envText = await readFile(envPath, 'utf8');
    await writeFile(
      envPath,
      envText
        .replace(/^SVC_IDP_ISSUER=$/m, `SVC_IDP_ISSUER=${client.body.issuer}`)
        .replace(/^SVC_IDP_CLIENT_ID=$/m, `SVC_IDP_CLIENT_ID=${client.body.clientId}`)
        .replace(/^SVC_IDP_CLIENT_SECRET=$/m, `SVC_IDP_CLIENT_SECRET=${client.body.clientSecret}`),
    );
    const created = await stack.request('POST', `${V3}/resources/project`, { as: ADMIN, body: { name: projectName, status: 'active' }, headers: { 'x-tenant-id': 'acme' } });
    expect(created.status).toBe(201);

    port = await freePort();
    server = startSvc(['dev', '--port', String(port), '--no-turbo'], { HOME: root, SVC_TOKEN: env.SVC_TOKEN }, project);
    await server.waitFor(new RegExp(`is running at http://localhost:${port}`));
  }, 900_000);
  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
    await browser?.close();
    await stack?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('signs in at the identity provider, lists the tenant\u2019s projects, adds one, and signs out; the browser never holds a token', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const app = `http://localhost:${port}`;
    await page.goto(`${app}/`);
    await page.getByRole('link', { name: 'Sign in' }).click();

    // The platform's identity provider: its own origin, its login form.
    await page.waitForURL((url) => url.origin === stack.url);
    await page.locator('#email').fill(ADMIN);
    await page.locator('form:has(#email) button[type=submit]').click();

    await page.waitForURL(`${app}/`);
    await expect.poll(() => page.locator('#user').textContent()).toBe(ADMIN);
    const row = page.locator('#rows tr', { hasText: projectName });
    await row.waitFor();
    expect(await row.locator('td').allTextContents()).toEqual([projectName, 'active', expect.any(String)]);
    expect(await page.locator('#summary').textContent()).toMatch(/^\d+ project resources?$/);

    const cookies = await context.cookies(app);
    const session = cookies.find((c) => c.name === 'app_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
    const jwt = /eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/;
    expect(cookies.filter((c) => jwt.test(c.value))).toEqual([]);
    expect(jwt.test(await page.content())).toBe(false);
    const storage = await context.storageState();
    expect(storage.origins.filter((o) => o.localStorage.length > 0)).toEqual([]);

    // An addition goes through the app's server with the session's CSRF token, and reaches the platform.
    const added = `Added in the browser ${run}`;
    await page.locator('#new-name').fill(added);
    await page.getByRole('button', { name: 'Add' }).click();
    await page.locator('#rows tr', { hasText: added }).waitFor();
    const stored = await stack.request('GET', `${V3}/resources?type=project&filter[name]=${encodeURIComponent(added)}`, { as: ADMIN, headers: { 'x-tenant-id': 'acme' } });
    expect(stored.body.data).toEqual([expect.objectContaining({ name: added })]);
    // The same call without the token is refused by the app's server, and adds nothing.
    const forged = await page.evaluate(async () => (await fetch('/api/svc/v3/resources/project', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Forged"}' })).status);
    expect(forged).toBe(403);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate(async () => (await fetch('/api/svc/v3/resources?type=project')).status)).toBe(401);
    await context.close();
  });
});
