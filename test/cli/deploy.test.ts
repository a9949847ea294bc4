import { execa } from 'execa';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCodeHost, type CodeHost } from './code-host.ts';
import { svc } from './svc.ts';

/**
 * `svc deploy` against a code host. No code host is reachable from the tests: they run against a
 * local server implementing the endpoints of GitHub's documented Actions REST API
 * (test/cli/code-host.ts), which opens each secret's sealed box with its own key pair and records
 * the dispatches it receives.
 */
describe('svc deploy against a local server implementing the code host Actions API', { timeout: 60_000 }, () => {
  let host: CodeHost;
  let dir: string;
  let project: string;
  let env: Record<string, string>;
  const inProject = (args: string[], extra: Record<string, string> = {}) => svc(args, { ...env, ...extra }, undefined, project);

  beforeAll(async () => {
    host = await startCodeHost({ owner: 'acme', repo: 'shop', workflows: ['deploy-demo.yml', 'deploy-prod.yml'], branches: ['main', 'release'], token: 'ghp_test-token' });
    dir = await mkdtemp(join(tmpdir(), 'svc-deploy-'));
    project = join(dir, 'shop');
    await mkdir(project);
    await writeFile(join(project, 'svc.config.ts'), "export default { app: { name: 'Shop' }, env: { required: ['BASE_URL_PUBLIC_API'], file: '.env.local' } };\n");
    await writeFile(
      join(project, '.env.local'),
      [
        '# The app on the platform',
        'BASE_URL_PUBLIC_API=https://platform.example.test',
        'SVC_IDP_CLIENT_ID=shop-client',
        'SVC_IDP_CLIENT_SECRET="s3cr3t with spaces # and a hash"',
        'SVC_VERTICAL_KEY=',
        'GITHUB_SHA=abc',
        'CALLBACK_URL=http://localhost:3000/callback',
        '',
      ].join('\n'),
    );
    env = { HOME: dir, SVC_CODE_HOST_URL: host.url, GITHUB_TOKEN: host.token };
  });
  afterAll(async () => {
    await host?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("sets the project's variables as repository secrets, sealed for the repository's key", async () => {
    const setup = await inProject(['deploy', 'setup', '--repo', 'acme/shop']);
    expect(setup.exitCode, setup.stderr).toBe(0);
    expect(Object.fromEntries(host.secrets)).toEqual({
      BASE_URL_PUBLIC_API: 'https://platform.example.test',
      SVC_IDP_CLIENT_ID: 'shop-client',
      SVC_IDP_CLIENT_SECRET: 's3cr3t with spaces # and a hash',
      CALLBACK_URL: 'http://localhost:3000/callback',
    });
    expect(setup.stdout).toMatch(/^SECRET +ACTION\nBASE_URL_PUBLIC_API +created\n/);
    expect(setup.stdout).toContain('\nskipped SVC_VERTICAL_KEY: no value\nskipped GITHUB_SHA: the code host refuses this name');
    expect(setup.stdout).toContain(`4 secret(s) of acme/shop set from ${join(project, '.env.local')}`);
    expect(setup.stderr).toContain('CALLBACK_URL names this machine: the deployed app cannot reach it');
    // What went over the wire: the key first, then one PUT per secret, none in the clear.
    const calls = host.requests.map((r) => `${r.method} ${r.path}`);
    expect(calls[0]).toBe('GET /repos/acme/shop/actions/secrets/public-key');
    expect(calls.filter((c) => c.startsWith('PUT '))).toEqual([
      'PUT /repos/acme/shop/actions/secrets/BASE_URL_PUBLIC_API',
      'PUT /repos/acme/shop/actions/secrets/SVC_IDP_CLIENT_ID',
      'PUT /repos/acme/shop/actions/secrets/SVC_IDP_CLIENT_SECRET',
      'PUT /repos/acme/shop/actions/secrets/CALLBACK_URL',
    ]);
    const put = host.requests.find((r) => r.path.endsWith('/SVC_IDP_CLIENT_SECRET'))!;
    expect(put.body).toEqual({ encrypted_value: expect.stringMatching(/^[A-Za-z0-9+/]+=*$/), key_id: '568250167242549743' });
    expect(JSON.stringify(put.body)).not.toContain('s3cr3t');
    expect(put.headers).toMatchObject({ authorization: `Bearer ${host.token}`, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' });

    const again = await inProject(['deploy', 'setup', '--repo', 'acme/shop']);
    expect(again.stdout).toMatch(/^BASE_URL_PUBLIC_API +updated$/m);
  });

  it("takes the repository from the git remote origin when --repo is not given", async () => {
    await execa('git', ['init', '--quiet'], { cwd: project });
    await execa('git', ['remote', 'add', 'origin', 'git@github.com:acme/shop.git'], { cwd: project });
    const status = await inProject(['deploy', 'status', '--format', 'json']);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(status.json.repo).toBe('acme/shop');
    const outside = await svc(['deploy', 'status'], env, undefined, dir);
    expect(outside.exitCode).toBe(2);
    expect(outside.stderr).toContain('Error E303: Required field missing: --repo');
  });

  it('dispatches the deploy workflow on a branch, and lists the runs it started', async () => {
    const before = host.requests.length;
    const trigger = await inProject(['deploy', 'trigger', '--repo', 'acme/shop', '--format', 'json']);
    expect(trigger.exitCode, trigger.stderr).toBe(0);
    expect(trigger.json).toEqual({ repo: 'acme/shop', workflow: 'deploy-demo.yml', ref: 'main', dispatched: true });
    expect(host.requests.slice(before).map((r) => [r.method, r.path, r.body])).toEqual([['POST', '/repos/acme/shop/actions/workflows/deploy-demo.yml/dispatches', { ref: 'main' }]]);
    const other = await inProject(['deploy', 'trigger', '--repo', 'acme/shop', '--branch', 'release', '--workflow', 'deploy-prod.yml']);
    expect(other.stdout).toBe('Dispatched deploy-prod.yml on release in acme/shop; svc deploy status --repo acme/shop shows its run.\n');
    expect(host.requests.at(-1)!.body).toEqual({ ref: 'release' });

    const status = await inProject(['deploy', 'status', '--repo', 'acme/shop', '--format', 'json']);
    expect(status.json).toMatchObject({ repo: 'acme/shop', total: 2 });
    expect(status.json.runs.map((r: any) => [r.name, r.branch, r.event, r.status, r.conclusion])).toEqual([
      ['deploy-prod', 'release', 'workflow_dispatch', 'queued', null],
      ['deploy-demo', 'main', 'workflow_dispatch', 'queued', null],
    ]);
    expect(host.requests.at(-1)!.path).toBe('/repos/acme/shop/actions/runs?per_page=20');
    const text = await inProject(['deploy', 'status', '--repo', 'acme/shop']);
    expect(text.stdout).toMatch(/^ID +WORKFLOW +BRANCH +EVENT +STATUS +CONCLUSION +CREATED\n\d+ +deploy-prod +release +workflow_dispatch +queued +- +\d{4}-/);
    expect(text.stdout).toContain('2 of 2 run(s) of acme/shop');

    const unknownWorkflow = await inProject(['deploy', 'trigger', '--repo', 'acme/shop', '--workflow', 'nope.yml', '--format', 'json']);
    expect(unknownWorkflow.exitCode).toBe(5);
    expect(unknownWorkflow.json.error).toMatchObject({ code: 'E202', message: 'Workflow nope.yml of acme/shop not found' });
    const unknownBranch = await inProject(['deploy', 'trigger', '--repo', 'acme/shop', '--branch', 'nope']);
    expect(unknownBranch.exitCode).toBe(1);
    expect(unknownBranch.stderr).toContain('Error E203: Platform API error: 422 No ref found for: nope');
    const unknownRepo = await inProject(['deploy', 'status', '--repo', 'acme/elsewhere']);
    expect(unknownRepo.stderr).toContain('Error E202: Repository acme/elsewhere not found');
  });

  it('refuses before any call without a token, with a refused token, an http address elsewhere, or a bad repository', async () => {
    const before = host.requests.length;
    const noToken = await inProject(['deploy', 'status', '--repo', 'acme/shop'], { GITHUB_TOKEN: '' });
    expect(noToken.exitCode).toBe(3);
    expect(noToken.stderr).toContain('Error E002: GITHUB_TOKEN environment variable not set');
    const clear = await inProject(['deploy', 'trigger', '--repo', 'acme/shop'], { SVC_CODE_HOST_URL: 'http://code-host.example.test' });
    expect(clear.exitCode).toBe(3);
    expect(clear.stderr).toContain('Error E006: Failed to load configuration: SVC_CODE_HOST_URL http://code-host.example.test uses http:');
    const badRepo = await inProject(['deploy', 'trigger', '--repo', 'not a repo']);
    expect(badRepo.exitCode).toBe(2);
    expect(badRepo.stderr).toContain('Error E305: Invalid input: --repo must be owner/name, not "not a repo"');
    const badWorkflow = await inProject(['deploy', 'trigger', '--repo', 'acme/shop', '--workflow', '../x']);
    expect(badWorkflow.exitCode).toBe(2);
    expect(host.requests.length).toBe(before);

    const refused = await inProject(['deploy', 'status', '--repo', 'acme/shop', '--format', 'json'], { GITHUB_TOKEN: 'ghp_wrong' });
    expect(refused.exitCode).toBe(4);
    expect(refused.json.error.code).toBe('E103');
    expect(host.secrets.size).toBe(4);
    const outside = await svc(['deploy', 'setup', '--repo', 'acme/shop'], env, undefined, dir);
    expect(outside.exitCode).toBe(3);
    expect(outside.stderr).toContain('Error E001: Not in an svc project');
  });
});
