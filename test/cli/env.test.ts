import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEV_USERS } from '../../api-edge/identity/dev-users.ts';
import { startTestStack, type TestStack } from '../harness/stack.ts';
import { createTenantFixture, type TenantFixture } from '../harness/tenant-fixture.ts';
import { svc } from './svc.ts';

/** `svc env list|pull|push` in project folders, against the platform's configuration store. */
describe('svc env', { timeout: 120_000 }, () => {
  const sql = postgres(inject('databaseUrl'), { max: 1, onnotice: () => {} });
  const run = randomBytes(3).toString('hex');
  const app = `shop-${run}`;
  const secret = `s3cret-${run}`;
  let stack: TestStack;
  let tenant: TenantFixture;
  let home: string;
  /** The project that pushes, and a second checkout that pulls. */
  let first: string;
  let second: string;
  let admin: Record<string, string>;
  let member: Record<string, string>;

  const stored = async (label: string, environment: string) => {
    const got = await stack.request('GET', `/v4/platform/config/${tenant.id}/${label}/${environment}?include_secrets=true`, { as: tenant.admin.email });
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    return Object.fromEntries(got.body.data.map((e: any) => [e.key, { value: e.value, secret: e.secret }]));
  };

  beforeAll(async () => {
    tenant = await createTenantFixture(sql, 'cli-env');
    stack = await startTestStack({ devUsers: [...DEV_USERS, tenant.admin, tenant.member] });
    home = await mkdtemp(join(tmpdir(), 'svc-env-'));
    first = join(home, 'first');
    second = join(home, 'second');
    for (const dir of [first, second]) {
      await mkdir(join(dir, 'src'), { recursive: true });
      await writeFile(join(dir, 'package.json'), JSON.stringify({ name: `@acme/${app}`, private: true }));
    }
    const common = { HOME: home, BASE_URL_PUBLIC_API: stack.url, SVC_TENANT_ID: tenant.id };
    admin = { ...common, SVC_TOKEN: await stack.token(tenant.admin.email) };
    member = { ...common, SVC_TOKEN: await stack.token(tenant.member.email) };
  });
  afterAll(async () => {
    await sql.end();
    await stack?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('lists .env.local with secrets masked unless --show-secrets, without calling the platform', async () => {
    const missing = await svc(['env', 'list'], admin, undefined, first);
    expect(missing.exitCode).toBe(3);
    expect(missing.stderr).toContain('Error E003: Configuration file not found: .env.local');

    await writeFile(
      join(first, '.env.local'),
      [
        '# Local settings of the shop',
        `BASE_URL_PUBLIC_API=${stack.url}`,
        'SVC_VERTICAL_KEY=shop',
        `SVC_CLIENT_SECRET=${secret}`,
        '# svc:secret',
        'WEBHOOK_SIGNING=whsec-1',
        'DATABASE_URL=postgres://app:hunter2@db/app',
        'GREETING="Hello, world"',
        '',
      ].join('\n'),
    );
    const offline = { ...admin, BASE_URL_PUBLIC_API: 'http://127.0.0.1:9' };
    // From a subfolder: .env.local is the project's, beside its package.json.
    const masked = await svc(['env', 'list'], offline, undefined, join(first, 'src'));
    expect(masked.exitCode, masked.stderr).toBe(0);
    expect(masked.stdout).toMatch(/^SVC_VERTICAL_KEY\s+shop\s+no$/m);
    expect(masked.stdout).toMatch(/^SVC_CLIENT_SECRET\s+\*{8}\s+yes$/m);
    expect(masked.stdout).toMatch(/^WEBHOOK_SIGNING\s+\*{8}\s+yes$/m);
    expect(masked.stdout).toMatch(/^DATABASE_URL\s+\*{8}\s+yes$/m);
    expect(masked.stdout).toMatch(/^GREETING\s+Hello, world\s+no$/m);
    expect(masked.stdout).not.toContain(secret);
    expect(masked.stdout).not.toContain('hunter2');

    const json = await svc(['env', 'list', '--format', 'json'], offline, undefined, first);
    expect(json.json.entries).toContainEqual({ key: 'SVC_CLIENT_SECRET', value: null, secret: true });
    expect(json.json).toMatchObject({ file: '.env.local', secretsShown: false });
    const shown = await svc(['env', 'list', '--show-secrets', '--json'], offline, undefined, first);
    expect(shown.stderr).toContain('--json is deprecated');
    expect(shown.json.entries).toContainEqual({ key: 'SVC_CLIENT_SECRET', value: secret, secret: true });
    expect(shown.json.entries).toContainEqual({ key: 'DATABASE_URL', value: 'postgres://app:hunter2@db/app', secret: true });
  });

  it('pushes .env.local to the store under the app name, secrets sealed, as an administrator only', async () => {
    const refused = await svc(['env', 'push', '--format', 'json'], member, undefined, first);
    expect(refused.exitCode).toBe(6);
    expect(refused.json.error.code).toBe('E204');

    const pushed = await svc(['env', 'push', '--format', 'json'], admin, undefined, first);
    expect(pushed.exitCode, pushed.stderr).toBe(0);
    expect(pushed.json).toMatchObject({ file: '.env.local', tenant_id: tenant.id, label: app, environment: 'dev' });
    expect(pushed.json.changes).toEqual([
      { key: 'BASE_URL_PUBLIC_API', action: 'created', secret: false, version: 1 },
      { key: 'SVC_VERTICAL_KEY', action: 'created', secret: false, version: 1 },
      { key: 'SVC_CLIENT_SECRET', action: 'created', secret: true, version: 1 },
      { key: 'WEBHOOK_SIGNING', action: 'created', secret: true, version: 1 },
      { key: 'DATABASE_URL', action: 'created', secret: true, version: 1 },
      { key: 'GREETING', action: 'created', secret: false, version: 1 },
    ]);
    expect(await stored(app, 'dev')).toMatchObject({ SVC_CLIENT_SECRET: { value: secret, secret: true }, GREETING: { value: 'Hello, world', secret: false } });
    const [sealed] = await sql<{ sealed: string }[]>`select sealed_value as sealed from config_entries where tenant_id = ${tenant.id}::uuid and key = 'SVC_CLIENT_SECRET'`;
    expect(sealed!.sealed).toMatch(/^sealed:v1:/);

    // Again: nothing changes. Then one key, after a local change.
    const again = await svc(['env', 'push'], admin, undefined, first);
    expect(again.stdout).toContain(`.env.local -> ${app}/dev: 0 changed, 6 unchanged`);
    await writeFile(join(first, '.env.local'), (await readFile(join(first, '.env.local'), 'utf8')).replace('SVC_VERTICAL_KEY=shop', 'SVC_VERTICAL_KEY=shop-2').replace('GREETING="Hello, world"', 'GREETING=changed'));
    const one = await svc(['env', 'push', '--key', 'SVC_VERTICAL_KEY', '--format', 'json'], admin, undefined, first);
    expect(one.json.changes).toEqual([{ key: 'SVC_VERTICAL_KEY', action: 'updated', secret: false, version: 2 }]);
    expect((await stored(app, 'dev'))['GREETING']!.value).toBe('Hello, world');
    const unknown = await svc(['env', 'push', '--key', 'NOT_THERE'], admin, undefined, first);
    expect(unknown.exitCode).toBe(5);
    expect(unknown.stderr).toContain('Error E202: Key NOT_THERE in .env.local not found');

    // Another environment and another label.
    const prod = await svc(['env', 'push', '--env', 'prod', '--label', 'shop-admin', '--key', 'GREETING', '--format', 'json'], admin, undefined, first);
    expect(prod.json).toMatchObject({ label: 'shop-admin', environment: 'prod', changes: [{ key: 'GREETING', action: 'created' }] });
    expect(await stored('shop-admin', 'prod')).toEqual({ GREETING: { value: 'changed', secret: false } });

    const audit = await stack.request('GET', `/v4/platform/config/${tenant.id}/audit?label=${app}&key=SVC_CLIENT_SECRET`, { as: tenant.admin.email });
    expect(audit.body.data).toEqual([expect.objectContaining({ action: 'created', secret: true, actor_email: tenant.admin.email })]);
  });

  it('pulls into .env.local keeping comments and unrelated lines; secrets only with --include-secrets', async () => {
    const before = ['# My own notes', 'LOCAL_ONLY=keep-me', '', '# Shop settings', 'SVC_VERTICAL_KEY=old', `SVC_CLIENT_SECRET=local-secret`, ''].join('\n');
    await writeFile(join(second, '.env.local'), before);
    const pulled = await svc(['env', 'pull', '--format', 'json'], member, undefined, second);
    expect(pulled.exitCode, pulled.stderr).toBe(0);
    expect(pulled.json).toMatchObject({ file: '.env.local', label: app, environment: 'dev', secretsIncluded: false, skippedSecrets: ['DATABASE_URL', 'SVC_CLIENT_SECRET', 'WEBHOOK_SIGNING'] });
    expect(pulled.json.changes).toEqual([
      { key: 'BASE_URL_PUBLIC_API', action: 'added', secret: false },
      { key: 'GREETING', action: 'added', secret: false },
      { key: 'SVC_VERTICAL_KEY', action: 'updated', secret: false },
    ]);
    expect(await readFile(join(second, '.env.local'), 'utf8')).toBe(
      ['# My own notes', 'LOCAL_ONLY=keep-me', '', '# Shop settings', 'SVC_VERTICAL_KEY=shop-2', 'SVC_CLIENT_SECRET=local-secret', `BASE_URL_PUBLIC_API=${stack.url}`, "GREETING='Hello, world'", ''].join('\n'),
    );

    const refused = await svc(['env', 'pull', '--include-secrets'], member, undefined, second);
    expect(refused.exitCode).toBe(6);
    const withSecrets = await svc(['env', 'pull', '--include-secrets'], admin, undefined, join(second, 'src'));
    expect(withSecrets.exitCode, withSecrets.stderr).toBe(0);
    expect(withSecrets.stdout).toContain(`${app}/dev -> ../.env.local: 2 added, 1 updated, 3 unchanged`);
    const text = await readFile(join(second, '.env.local'), 'utf8');
    expect(text).toContain(`# Shop settings\nSVC_VERTICAL_KEY=shop-2\n# svc:secret\nSVC_CLIENT_SECRET=${secret}\n`);
    expect(text).toContain('# svc:secret\nDATABASE_URL=postgres://app:hunter2@db/app\n# svc:secret\nWEBHOOK_SIGNING=whsec-1\n');
    expect(text.startsWith('# My own notes\nLOCAL_ONLY=keep-me\n')).toBe(true);
    const listed = await svc(['env', 'list', '--format', 'json'], admin, undefined, second);
    expect(listed.json.entries).toContainEqual({ key: 'WEBHOOK_SIGNING', value: null, secret: true });

    const other = await svc(['env', 'pull', '--env', 'prod', '--label', 'shop-admin'], member, undefined, second);
    expect(other.exitCode, other.stderr).toBe(0);
    expect(await readFile(join(second, '.env.local'), 'utf8')).toMatch(/\nGREETING=changed\n/);
    const empty = await svc(['env', 'pull', '--env', 'staging'], member, undefined, second);
    expect(empty.exitCode).toBe(0);
    expect(empty.stderr).toContain(`the store holds no configuration for ${app}/staging`);
  });

  it('takes the label from the project and refuses what it cannot resolve, changing nothing', async () => {
    // Outside any project, without --label.
    const outside = await svc(['env', 'pull'], admin, undefined, '/');
    expect(outside.exitCode).toBe(3);
    expect(outside.stderr).toContain('Error E001: Not in an svc project');
    const nameless = join(home, 'nameless');
    await mkdir(nameless);
    await writeFile(join(nameless, 'package.json'), '{"private":true}');
    const noName = await svc(['env', 'push', '--format', 'json'], admin, undefined, nameless);
    expect(noName.json.error).toMatchObject({ code: 'E303', message: 'Required field missing: --label (package.json has no name)' });
    const badLabel = await svc(['env', 'pull', '--label', 'Not A Label'], admin, undefined, second);
    expect(badLabel.exitCode).toBe(2);
    expect(badLabel.stderr).toContain('Error E302: Validation failed: label must be');
    const noTenant = await svc(['env', 'pull', '--format', 'json'], { ...admin, SVC_TENANT_ID: '' }, undefined, second);
    expect(noTenant.json.error.code).toBe('E002');
  });
});
