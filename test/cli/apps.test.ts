import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { authorizeWithPkce } from '../../api-edge/identity/login-flow.ts';
import { startTestStack, type TestStack } from '../harness/stack.ts';
import { createTenantFixture, type TenantFixture } from '../harness/tenant-fixture.ts';
import { svc } from './svc.ts';

const OFFLINE = 'http://127.0.0.1:9';

/**
 * `svc vertical list|create|select|provision` and `svc provision idp` against the running platform,
 * in a project folder whose `.env.local` the commands write. The identity-provider client they
 * register is then used at the platform's built-in provider: the secret written to `.env.local`
 * signs a user in.
 */
describe('svc vertical and provision idp', { timeout: 180_000 }, () => {
  const run = randomBytes(3).toString('hex');
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  let stack: TestStack;
  let company: TenantFixture;
  let home: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    company = await createTenantFixture(sql, 'cliapps', { plan: 'team' });
    stack = await startTestStack({ devUsers: [...DEV_USERS, company.admin, company.member] });
    home = await mkdtemp(join(tmpdir(), 'svc-home-'));
    env = { HOME: home, SVC_TOKEN: await stack.token(company.admin.email), BASE_URL_PUBLIC_API: stack.url };
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  /** A project folder of the test's own. */
  const project = () => mkdtemp(join(home, 'project-'));

  it('enrolls apps with the defaults and with every option, lists them, and refuses a taken key', async () => {
    const plain = await svc(['vertical', 'create', `Field Ops ${run}`, '--tenant-id', company.id, '--format', 'json'], env);
    expect(plain.exitCode, plain.stdout + plain.stderr).toBe(0);
    expect(plain.json).toMatchObject({ key: `field-ops-${run}`, name: `Field Ops ${run}`, template: null, source: 'svc-cli', appUrl: null, status: 'pending', companyTenantId: company.id, childTenantId: null });
    expect(plain.stderr).toContain(`svc vertical select field-ops-${run}`);

    const full = await svc(
      [
        'vertical', 'create', 'Portal', '--tenant-id', company.slug, '--key', `portal-${run}`, '--template', 'blank-vertical-template', '--source', 'scaffold',
        '--app-url', 'https://portal.example.test', '--status', 'active', '--child-tenant', `Portal ${run}`, '--child-tenant-slug', `portal-tenant-${run}`,
        '--parent-tenant', company.slug, '--format', 'json',
      ],
      env,
    );
    expect(full.exitCode, full.stdout + full.stderr).toBe(0);
    expect(full.json).toMatchObject({
      key: `portal-${run}`,
      name: 'Portal',
      template: 'blank-vertical-template',
      source: 'scaffold',
      appUrl: 'https://portal.example.test',
      status: 'active',
      childTenantId: expect.any(String),
      childTenantSlug: `portal-tenant-${run}`,
    });

    const listed = await svc(['vertical', 'list', '--tenant-id', company.id, '--format', 'json'], env);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(listed.json).toMatchObject({ total: 2, limit: 50 });
    expect(listed.json.data.map((r: any) => r.data.key).sort()).toEqual([`field-ops-${run}`, `portal-${run}`]);
    const one = await svc(['vertical', 'list', '--tenant-id', company.id, '--limit', '1', '--format', 'json'], env);
    expect(one.json).toMatchObject({ total: 2, limit: 1, hasMore: true });
    expect(one.json.data).toHaveLength(1);
    const text = await svc(['vertical', 'list', '--tenant-id', company.id], env);
    expect(text.stdout).toMatch(/^KEY\s+NAME\s+STATUS\s+TEMPLATE\s+CHILD TENANT\s+APP URL\n/);
    expect(text.stdout).toMatch(new RegExp(`^portal-${run}\\s+Portal\\s+active\\s+blank-vertical-template\\s+portal-tenant-${run}\\s+https://portal\\.example\\.test$`, 'm'));

    const taken = await svc(['vertical', 'create', 'Again', '--tenant-id', company.id, '--key', `portal-${run}`, '--format', 'json'], env);
    expect(taken.json.error).toMatchObject({ code: 'E205', exitCode: 7 });
    const offline = { ...env, BASE_URL_PUBLIC_API: OFFLINE };
    for (const args of [['--child-tenant-slug', 'x'], ['--parent-tenant', company.id], ['--key', 'Not_Kebab']]) {
      const refused = await svc(['vertical', 'create', 'Refused', '--tenant-id', company.id, ...args, '--format', 'json'], offline);
      expect(refused.json.error, args.join(' ')).toMatchObject({ code: 'E305', exitCode: 2 });
    }
    expect((await svc(['vertical', 'list', '--tenant-id', company.id, '--format', 'json'], env)).json.total).toBe(2);
  });

  it('selects an app for the project: SVC_VERTICAL_KEY set in .env.local, other lines and comments kept, the key checked first', async () => {
    await svc(['vertical', 'create', `Select ${run}`, '--tenant-id', company.id, '--format', 'json'], env);
    const dir = await project();
    const before = ['# Local settings', 'API_URL=https://api.example.test', '', 'export SVC_VERTICAL_KEY=old-app # the old one', 'NOTE="two', 'lines"', 'SVC_VERTICAL_KEY=duplicate', ''].join('\n');
    await writeFile(join(dir, '.env.local'), before, { mode: 0o640 });

    const selected = await svc(['vertical', 'select', `select-${run}`, '--tenant-id', company.id, '--format', 'json'], env, undefined, dir);
    expect(selected.exitCode, selected.stdout + selected.stderr).toBe(0);
    expect(selected.json).toEqual({ key: `select-${run}`, tenantId: company.id, validated: true, envFile: join(dir, '.env.local') });
    expect(await readFile(join(dir, '.env.local'), 'utf8')).toBe(
      ['# Local settings', 'API_URL=https://api.example.test', '', `export SVC_VERTICAL_KEY=select-${run}`, 'NOTE="two', 'lines"', ''].join('\n'),
    );
    expect((await stat(join(dir, '.env.local'))).mode & 0o777).toBe(0o640);

    const written = await readFile(join(dir, '.env.local'), 'utf8');
    const unknown = await svc(['vertical', 'select', `no-such-app-${run}`, '--tenant-id', company.id, '--format', 'json'], env, undefined, dir);
    expect(unknown.json.error).toMatchObject({ code: 'E202', exitCode: 5 });
    expect(await readFile(join(dir, '.env.local'), 'utf8')).toBe(written);
    const badKey = await svc(['vertical', 'select', 'Bad Key', '--skip-validate', '--format', 'json'], env, undefined, dir);
    expect(badKey.json.error).toMatchObject({ code: 'E305' });
    expect(await readFile(join(dir, '.env.local'), 'utf8')).toBe(written);

    // Without the check, no call is made (the platform is unreachable), and a missing file is made private.
    const fresh = await project();
    const unchecked = await svc(['vertical', 'select', 'not-yet-enrolled', '--skip-validate'], { ...env, BASE_URL_PUBLIC_API: OFFLINE }, undefined, fresh);
    expect(unchecked.exitCode, unchecked.stderr).toBe(0);
    expect(unchecked.stderr).toContain('SVC_VERTICAL_KEY=not-yet-enrolled written to');
    expect(await readFile(join(fresh, '.env.local'), 'utf8')).toBe('SVC_VERTICAL_KEY=not-yet-enrolled\n');
    expect((await stat(join(fresh, '.env.local'))).mode & 0o777).toBe(0o600);
  });

  it("provisions an app's storage: its child tenant's, as a dry run, with a search rebuild, or for real with --select", async () => {
    const child = (await stack.request('GET', '/v4/identity/tenants', { as: company.admin.email })).body.data.find((t: any) => t.slug === `portal-tenant-${run}`);
    expect(child).toBeDefined();
    const dryRun = await svc(['vertical', 'provision', `portal-${run}`, '--tenant-id', company.id, '--backend', 'search', '--dry-run', '--rebuild-search', '--format', 'json'], env);
    expect(dryRun.exitCode, dryRun.stdout + dryRun.stderr).toBe(0);
    expect(dryRun.json).toMatchObject({ key: `portal-${run}`, tenantId: child.id, validated: true, provision: { tenantId: child.id, backend: 'search', dryRun: true, rebuildSearch: true, state: 'planned' } });
    expect(dryRun.json.provision.changes.map((c: any) => c.action)).toContain('rebuild');

    const dir = await project();
    const selectDry = await svc(['vertical', 'provision', `field-ops-${run}`, '--tenant-id', company.id, '--backend', 'blob', '--dry-run', '--select'], env, undefined, dir);
    expect(selectDry.exitCode, selectDry.stderr).toBe(0);
    expect(selectDry.stdout).toMatch(/^app field-ops-\w+, tenant [0-9a-f-]{36}\nblob: would make \d+ change\(s\)/);
    await expect(stat(join(dir, '.env.local'))).rejects.toThrow();

    const real = await svc(['vertical', 'provision', `field-ops-${run}`, '--tenant-id', company.id, '--backend', 'blob', '--select', '--format', 'json'], env, undefined, dir);
    expect(real.exitCode, real.stdout + real.stderr).toBe(0);
    expect(real.json).toMatchObject({ tenantId: company.id, provision: { backend: 'blob', dryRun: false, state: expect.stringMatching(/^(completed|running)$/) }, envFile: join(dir, '.env.local') });
    expect(await readFile(join(dir, '.env.local'), 'utf8')).toBe(`SVC_VERTICAL_KEY=field-ops-${run}\n`);

    const unknown = await svc(['vertical', 'provision', `no-such-app-${run}`, '--tenant-id', company.id, '--dry-run', '--format', 'json'], env);
    expect(unknown.json.error).toMatchObject({ code: 'E202' });
    // Unchecked, the key is not read: the company tenant's storage is provisioned.
    const unchecked = await svc(['vertical', 'provision', `no-such-app-${run}`, '--tenant-id', company.id, '--backend', 'blob', '--dry-run', '--skip-validate', '--format', 'json'], env);
    expect(unchecked.exitCode, unchecked.stderr).toBe(0);
    expect(unchecked.json).toMatchObject({ tenantId: company.id, validated: false, provision: { tenantId: company.id, dryRun: true } });
  });

  /** Signs the company's admin in with the client at the built-in provider and exchanges the code with the secret: the token endpoint's status. */
  async function signInWith(clientId: string, secret: string, redirectUri: string): Promise<number> {
    const pending = await authorizeWithPkce({ issuer: stack.url, email: company.admin.email, clientId, redirectUri, scope: 'openid email profile' });
    const code = pending.callbackUrl.searchParams.get('code')!;
    const response = await fetch(`${stack.url}/oauth2/v2.0/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: pending.redirectUri, code_verifier: pending.codeVerifier }),
    });
    return response.status;
  }

  const envOf = async (dir: string) => Object.fromEntries((await readFile(join(dir, '.env.local'), 'utf8')).split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));

  it("registers the project's app with the identity provider, writes the client to .env.local, rotates its secret and sets its scopes", async () => {
    const key = `idp-${run}`;
    expect((await svc(['vertical', 'create', `Idp ${run}`, '--tenant-id', company.id, '--key', key, '--format', 'json'], env)).exitCode).toBe(0);
    const dir = await project();
    const redirectUri = 'http://localhost:3000/auth/callback';
    const noKey = await svc(['provision', 'idp', '--tenant-id', company.id, '--format', 'json'], env, undefined, dir);
    expect(noKey.json.error).toMatchObject({ code: 'E002', message: 'SVC_VERTICAL_KEY environment variable not set' });
    await writeFile(join(dir, '.env.local'), `# app\nSVC_VERTICAL_KEY=${key}\n`);
    const tenantEnv = { ...env, SVC_TENANT_ID: company.id };

    const created = await svc(['provision', 'idp', '--display-name', 'Idp app', '--format', 'json'], tenantEnv, undefined, dir);
    expect(created.exitCode, created.stdout + created.stderr).toBe(0);
    expect(created.json).toMatchObject({ appKey: key, clientId: expect.any(String), issuer: stack.url, checked: true, created: true, rotated: false, written: ['SVC_IDP_CLIENT_ID', 'SVC_IDP_ISSUER', 'SVC_IDP_CLIENT_SECRET'] });
    // The secret is written, never printed.
    const first = await envOf(dir);
    expect(first).toMatchObject({ SVC_VERTICAL_KEY: key, SVC_IDP_CLIENT_ID: created.json.clientId, SVC_IDP_ISSUER: stack.url, SVC_IDP_CLIENT_SECRET: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(created.stdout + created.stderr).not.toContain(first.SVC_IDP_CLIENT_SECRET!);
    expect(await readFile(join(dir, '.env.local'), 'utf8')).toMatch(/^# app\nSVC_VERTICAL_KEY=/);
    expect(await signInWith(first.SVC_IDP_CLIENT_ID!, first.SVC_IDP_CLIENT_SECRET!, redirectUri)).toBe(200);

    // A client id in .env.local: no call without --force.
    const again = await svc(['provision', 'idp', '--format', 'json'], { ...tenantEnv, BASE_URL_PUBLIC_API: OFFLINE }, undefined, dir);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.json).toMatchObject({ clientId: first.SVC_IDP_CLIENT_ID, checked: false, written: [] });
    const forced = await svc(['provision', 'idp', '--force', '--display-name', 'Idp app', '--debug', '--format', 'json'], tenantEnv, undefined, dir);
    expect(forced.exitCode, forced.stdout + forced.stderr).toBe(0);
    expect(forced.json).toMatchObject({ clientId: first.SVC_IDP_CLIENT_ID, checked: true, created: false, written: [] });
    expect(forced.stderr).toContain('POST /v4/platform/provisioning/idp-apps\n');
    expect(await envOf(dir)).toEqual(first);

    const rotated = await svc(['provision', 'idp', '--rotate-secret', '--format', 'json'], tenantEnv, undefined, dir);
    expect(rotated.exitCode, rotated.stdout + rotated.stderr).toBe(0);
    expect(rotated.json).toMatchObject({ clientId: first.SVC_IDP_CLIENT_ID, rotated: true, written: ['SVC_IDP_CLIENT_SECRET'], previousSecretExpiresAt: expect.any(String) });
    const second = await envOf(dir);
    expect(second.SVC_IDP_CLIENT_SECRET).not.toBe(first.SVC_IDP_CLIENT_SECRET);
    expect(await signInWith(second.SVC_IDP_CLIENT_ID!, second.SVC_IDP_CLIENT_SECRET!, redirectUri)).toBe(200);

    // --scopes grants the app's tokens these permissions (asking the platform though .env.local has a client id); they stay until named again.
    const scoped = await svc(['provision', 'idp', '--scopes', 'resources.read,chat.access', '--display-name', 'Idp app', '--format', 'json'], tenantEnv, undefined, dir);
    expect(scoped.exitCode, scoped.stdout + scoped.stderr).toBe(0);
    expect(scoped.json).toMatchObject({ clientId: first.SVC_IDP_CLIENT_ID, checked: true, created: false, written: [] });
    expect([...scoped.json.scopes].sort()).toEqual(['chat.access', 'resources.read']);
    const kept = await svc(['provision', 'idp', '--force', '--display-name', 'Idp app', '--format', 'json'], tenantEnv, undefined, dir);
    expect([...kept.json.scopes].sort()).toEqual(['chat.access', 'resources.read']);
    for (const bad of ['resources.write', '']) {
      const refused = await svc(['provision', 'idp', '--scopes', bad, '--format', 'json'], { ...tenantEnv, BASE_URL_PUBLIC_API: OFFLINE }, undefined, dir);
      expect(refused.json.error, bad).toMatchObject({ code: 'E305', exitCode: 2, message: expect.stringContaining('--scopes') });
    }

    // Another folder of the same app: the client is confirmed, its secret cannot be shown again.
    const clone = await project();
    await writeFile(join(clone, '.env.local'), `SVC_VERTICAL_KEY=${key}\n`);
    const confirmed = await svc(['provision', 'idp', '--display-name', 'Idp app'], tenantEnv, undefined, clone);
    expect(confirmed.exitCode, confirmed.stderr).toBe(0);
    expect(confirmed.stderr).toContain('get a new one with svc provision idp --rotate-secret');
    expect(await envOf(clone)).toEqual({ SVC_VERTICAL_KEY: key, SVC_IDP_CLIENT_ID: first.SVC_IDP_CLIENT_ID, SVC_IDP_ISSUER: stack.url });

    // A member may not register apps; an app the tenant does not have is E202.
    const member = await svc(['provision', 'idp', '--force', '--format', 'json'], { ...tenantEnv, SVC_TOKEN: await stack.token(company.member.email) }, undefined, clone);
    expect(member.json.error).toMatchObject({ code: 'E204' });
    const stranger = await project();
    await writeFile(join(stranger, '.env.local'), `SVC_VERTICAL_KEY=no-such-app-${run}\n`);
    const unknown = await svc(['provision', 'idp', '--format', 'json'], tenantEnv, undefined, stranger);
    expect(unknown.json.error).toMatchObject({ code: 'E202' });
    expect(await envOf(stranger)).toEqual({ SVC_VERTICAL_KEY: `no-such-app-${run}` });
  });
});
