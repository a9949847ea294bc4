import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestStack, type TestStack } from '../harness/stack.ts';
import { svc } from './svc.ts';

const git = promisify(execFile);

/** Everything `svc init` writes from the template that ships with the client (`.env.local` and the manifest come on top). */
const TEMPLATE_FILES = [
  '.agents/object-types.md',
  '.agents/platform-api.md',
  '.agents/workflow.md',
  '.gitignore',
  'AGENTS.md',
  'README.md',
  'lib/bff.mjs',
  'lib/env.mjs',
  'package.json',
  'public/app.js',
  'public/index.html',
  'public/styles.css',
  'scripts/dev.mjs',
  'server.mjs',
  'src/svc.config/object-types.ts',
  'svc.config.ts',
];

const BIN = new URL('../../cli/bin/svc.js', import.meta.url).pathname;

/**
 * Runs the client in a pseudo-terminal (util-linux `script`), as a person at a terminal would:
 * each `[pattern, keys]` step waits for the output to match, then types the keys.
 */
function inTerminal(args: string[], env: Record<string, string>, cwd: string, steps: Array<[RegExp, string]>): Promise<{ exitCode: number; output: string }> {
  const quoted = ['node', BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  // A terminal of a usual size: prompts wrap at its width.
  const child = spawn('script', ['-qec', `stty cols 120 rows 40; ${quoted}`, '/dev/null'], { cwd, env: { PATH: process.env['PATH']!, TERM: 'xterm', NO_COLOR: '1', ...env } });
  let output = '';
  let step = 0;
  const advance = () => {
    while (step < steps.length && steps[step]![0].test(output)) child.stdin.write(steps[step++]![1]);
  };
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
    advance();
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ exitCode: code ?? -1, output })));
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Every file under `dir` but `.git/` and `node_modules/`, relative, sorted. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .filter((path) => !path.startsWith('.git/') && !path.startsWith('node_modules/'))
    .sort();
}

/** `svc init` through the real process: scaffolding, git, dependencies, enrolment in the company tenant, every option. */
describe('svc init', { timeout: 180_000 }, () => {
  let stack: TestStack;
  let root: string;
  let acme: string;
  let token: string;
  const run = randomBytes(3).toString('hex');
  /** A home of its own per case, git able to commit, the platform's address; logged in only when `token` is given. */
  const envFor = async (options: { token?: string } = {}) => {
    const home = await mkdtemp(join(root, 'home-'));
    return {
      HOME: home,
      BASE_URL_PUBLIC_API: stack.url,
      GIT_AUTHOR_NAME: 'Dev',
      GIT_AUTHOR_EMAIL: 'dev@example.test',
      GIT_COMMITTER_NAME: 'Dev',
      GIT_COMMITTER_EMAIL: 'dev@example.test',
      ...(options.token ? { SVC_TOKEN: options.token } : {}),
    };
  };
  const readJson = async (path: string) => JSON.parse(await readFile(path, 'utf8'));
  const enrollment = async (key: string) => {
    const listed = await stack.request('GET', `/v4/data/resources/${acme}/tenant-vertical-enrollment?where=${encodeURIComponent(JSON.stringify({ key }))}`, { as: ADMIN });
    return listed.body.data as any[];
  };

  beforeAll(async () => {
    stack = await startTestStack();
    root = await mkdtemp(join(tmpdir(), 'svc-init-'));
    token = await stack.token(ADMIN);
    acme = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: any) => t.slug === 'acme').id;
  });
  afterAll(async () => {
    await stack?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('scaffolds the template into a new folder with .env.local, the manifest, a git repository and installed dependencies; not logged in, it enrols nothing', async () => {
    const env = await envFor();
    const cwd = await mkdtemp(join(root, 'new-'));
    const created = await svc(['init', 'field-notes', '--skip-prompts'], env, undefined, cwd);
    expect(created.exitCode, created.stderr).toBe(0);
    const dir = join(cwd, 'field-notes');
    expect(created.stdout).toContain(`field-notes scaffolded in ${dir}`);
    expect(created.stdout).toMatch(/^files\s+16 created$/m);
    expect(created.stdout).toMatch(/^git\s+committed$/m);
    expect(created.stdout).toMatch(/^packages\s+installed$/m);
    expect(created.stdout).toMatch(/^app\s+not enrolled: not logged in$/m);
    expect(created.stdout).toContain('Next:\n  cd field-notes\n  svc login\n  svc init --current-dir\n  svc provision idp\n  svc dev\n');
    expect(await filesUnder(dir)).toEqual([...TEMPLATE_FILES, '.env.local', 'package-lock.json', 'svc.project.json'].sort());

    // Rendered for the app: its name in the page, its key as the package name.
    expect(await readFile(join(dir, 'public/index.html'), 'utf8')).toContain('<title>field-notes</title>');
    expect((await readJson(join(dir, 'package.json'))).name).toBe('field-notes');
    expect(await readFile(join(dir, 'svc.config.ts'), 'utf8')).toContain("key: 'field-notes'");

    const manifest = await readJson(join(dir, 'svc.project.json'));
    expect(manifest).toMatchObject({
      manifestVersion: 1,
      app: { name: 'field-notes', key: 'field-notes', id: null },
      packageProfile: 'external',
      tenancy: { companyTenant: null, parentTenant: null, childTenant: null },
      template: { source: 'builtin:app', clientVersion: expect.stringMatching(/^\d+\.\d+\.\d+/), agent: true },
    });
    for (const path of TEMPLATE_FILES.filter((p) => p !== 'package.json' && p !== '.gitignore')) {
      expect(manifest.template.files[path], path).toBe(sha256(await readFile(join(dir, path), 'utf8')));
    }

    const envFile = await readFile(join(dir, '.env.local'), 'utf8');
    expect(envFile).toContain(`BASE_URL_PUBLIC_API=${stack.url}\n`);
    expect(envFile).toMatch(/^SVC_IDP_CLIENT_ID=$/m);
    expect(envFile).toMatch(/^SVC_APP_KEY=field-notes$/m);
    expect((await stat(join(dir, '.env.local'))).mode & 0o777).toBe(0o600);

    const log = await git('git', ['log', '--format=%s', '--name-only'], { cwd: dir });
    expect(log.stdout).toContain('Scaffold field-notes with svc init');
    expect(log.stdout).not.toContain('.env.local');
    expect((await git('git', ['status', '--porcelain'], { cwd: dir })).stdout).toBe('');

    // The scaffold is a project the other commands accept, from any of its folders.
    const validated = await svc(['types', 'validate'], env, undefined, join(dir, 'public'));
    expect(validated.exitCode, validated.stderr).toBe(0);
    expect(validated.stderr).toContain(`1 object types in ${join(dir, 'src/svc.config/object-types.ts')} are valid.`);
    const checked = await svc(['template', 'check', '--format', 'json'], env, undefined, join(dir, 'src'));
    expect(checked.exitCode, checked.stdout).toBe(0);
    expect(checked.json).toMatchObject({ projectDir: dir, comparable: true, drift: false, summary: { unchanged: 8, present: 8, missing: 0 } });
  });

  it('logged in: enrols the app in the company tenant with a child tenant, evaluates its capabilities, and binds to it when run again', async () => {
    const env = await envFor({ token });
    const cwd = await mkdtemp(join(root, 'enrol-'));
    const key = `shop-${run}`;
    const created = await svc(['init', key, '--skip-prompts', '--company-tenant', 'acme', '--child-tenant', `Shop ${run}`, '--package-profile', 'hybrid'], env, undefined, cwd);
    expect(created.exitCode, created.stderr).toBe(0);
    const [app] = await enrollment(key);
    expect(app.data).toMatchObject({ key, name: key, source: 'svc-cli', status: 'pending', childTenantSlug: `shop-${run}` });
    expect(created.stdout).toMatch(new RegExp(`^app\\s+created ${key} in tenant acme \\(pending\\), child tenant shop-${run}$`, 'm'));
    expect(created.stdout).toMatch(/^capabilities\s+plan \w+: \d+ of \d+ allowed/m);

    const dir = join(cwd, key);
    const manifest = await readJson(join(dir, 'svc.project.json'));
    expect(manifest).toMatchObject({
      app: { key, id: app.id },
      packageProfile: 'hybrid',
      tenancy: { companyTenant: { id: acme, slug: 'acme' }, parentTenant: null, childTenant: { name: `Shop ${run}`, slug: `shop-${run}`, id: app.data.childTenantId } },
    });
    // The child tenant exists, under acme, with the caller as its administrator.
    const tenants = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data;
    expect(tenants.find((t: any) => t.id === app.data.childTenantId)).toMatchObject({ slug: `shop-${run}`, parentId: acme });

    // Again in the folder: the same app, bound (no second enrolment), the manifest's choices kept.
    const again = await svc(['init', '--current-dir', '--skip-prompts'], env, undefined, dir);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`^app\\s+bound ${key} in tenant acme`, 'm'));
    expect(again.stdout).toMatch(/^files\s+8 kept, 8 unchanged$/m);
    expect(again.stdout).toMatch(/^git\s+existing$/m);
    expect(await enrollment(key)).toHaveLength(1);
    expect(await readJson(join(dir, 'svc.project.json'))).toMatchObject({ app: { id: app.id }, packageProfile: 'hybrid', tenancy: { childTenant: { id: app.data.childTenantId } } });
  });

  it('takes the active tenant, the deprecated --tenant, --create-child-tenant with --parent-tenant, and --no-agent', async () => {
    const env = await envFor({ token });
    const cwd = await mkdtemp(join(root, 'options-'));
    const selected = await svc(['tenant', 'select', 'acme'], env);
    expect(selected.exitCode, selected.stderr).toBe(0);

    const fromContext = await svc(['init', `ctx-${run}`, '--skip-prompts', '--no-agent'], env, undefined, cwd);
    expect(fromContext.exitCode, fromContext.stderr).toBe(0);
    expect(await enrollment(`ctx-${run}`)).toHaveLength(1);
    const dir = join(cwd, `ctx-${run}`);
    const files = await filesUnder(dir);
    expect(files).not.toContain('AGENTS.md');
    expect(files.filter((f) => f.startsWith('.agents/'))).toEqual([]);
    expect((await readJson(join(dir, 'svc.project.json'))).template.agent).toBe(false);
    // The agent assets are left out of the drift too, and out of a second run that does not ask for them.
    expect((await svc(['template', 'check'], env, undefined, dir)).exitCode).toBe(0);
    const rerun = await svc(['init', '--current-dir', '--skip-prompts'], env, undefined, dir);
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    expect(await filesUnder(dir)).not.toContain('AGENTS.md');

    const deprecated = await svc(['init', `child-${run}`, '--skip-prompts', '--tenant', acme, '--create-child-tenant', '--parent-tenant', 'acme'], env, undefined, cwd);
    expect(deprecated.exitCode, deprecated.stderr).toBe(0);
    expect(deprecated.stderr).toContain('--tenant is deprecated; use --company-tenant');
    const [app] = await enrollment(`child-${run}`);
    expect(app.data).toMatchObject({ childTenantSlug: `child-${run}` });
    expect((await readJson(join(cwd, `child-${run}`, 'svc.project.json'))).tenancy).toMatchObject({
      companyTenant: { id: acme },
      parentTenant: 'acme',
      childTenant: { name: `child-${run}`, slug: `child-${run}` },
    });
  });

  it('--current-dir keeps other files and git metadata, merges package.json and .gitignore, and replaces a changed scaffold file after saving it', async () => {
    const env = await envFor();
    const dir = await mkdtemp(join(root, 'existing-'));
    await git('git', ['init', '--quiet', '--initial-branch=trunk'], { cwd: dir });
    await writeFile(join(dir, 'notes.txt'), 'mine\n');
    await writeFile(join(dir, 'README.md'), '# Mine\n');
    await writeFile(join(dir, 'server.mjs'), 'console.log("my own server");\n');
    await writeFile(join(dir, '.gitignore'), 'dist/\n');
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'mine', scripts: { test: 'node --test' } }, null, 2));
    await git('git', ['add', '--all'], { cwd: dir });
    await git('git', ['-c', 'user.name=Dev', '-c', 'user.email=dev@example.test', 'commit', '--quiet', '-m', 'mine'], { cwd: dir });
    const head = (await git('git', ['rev-parse', 'HEAD'], { cwd: dir })).stdout;

    const scaffolded = await svc(['init', '--current-dir', '--skip-prompts'], env, undefined, dir);
    expect(scaffolded.exitCode, scaffolded.stderr).toBe(0);
    expect(scaffolded.stdout).toMatch(/^git\s+existing$/m);
    expect(scaffolded.stdout).toMatch(/^files\s+12 created, 1 replaced \(yours saved as \.bak\), 2 merged, 1 kept$/m);
    expect(await readFile(join(dir, 'notes.txt'), 'utf8')).toBe('mine\n');
    expect(await readFile(join(dir, 'README.md'), 'utf8')).toBe('# Mine\n');
    expect(await readFile(join(dir, 'server.mjs.bak'), 'utf8')).toBe('console.log("my own server");\n');
    expect(await readFile(join(dir, 'server.mjs'), 'utf8')).toContain('createBff');
    expect(await readJson(join(dir, 'package.json'))).toEqual({
      name: 'mine',
      scripts: { test: 'node --test', dev: 'node scripts/dev.mjs', start: 'node server.mjs' },
      version: '0.1.0',
      private: true,
      type: 'module',
      description: expect.any(String),
      engines: { node: '>=20' },
    });
    expect(await readFile(join(dir, '.gitignore'), 'utf8')).toBe('dist/\nnode_modules/\n.env.local\n*.bak\n');
    expect((await git('git', ['rev-parse', 'HEAD'], { cwd: dir })).stdout).toBe(head);
    expect((await git('git', ['branch', '--show-current'], { cwd: dir })).stdout.trim()).toBe('trunk');
    const name = dir.split('/').pop()!;
    expect((await readJson(join(dir, 'svc.project.json'))).app).toMatchObject({ name });

    // A managed file the client wrote and nobody changed, whose template moved on, is updated without a backup.
    const manifestPath = join(dir, 'svc.project.json');
    const manifest = await readJson(manifestPath);
    const older = '// an older version of the template\n';
    await writeFile(join(dir, 'lib/env.mjs'), older);
    manifest.template.files['lib/env.mjs'] = sha256(older);
    await writeFile(manifestPath, JSON.stringify(manifest, null, 2));
    // And one changed here.
    await writeFile(join(dir, 'lib/bff.mjs'), '// mine now\n');
    const drift = await svc(['template', 'check', '--format', 'json'], env, undefined, dir);
    expect(drift.exitCode).toBe(9);
    expect(drift.json.drift).toBe(true);
    expect(drift.json.files).toEqual(
      expect.arrayContaining([
        { path: 'lib/env.mjs', kind: 'managed', status: 'outdated' },
        { path: 'lib/bff.mjs', kind: 'managed', status: 'modified' },
        { path: 'README.md', kind: 'seeded', status: 'present' },
      ]),
    );
    const text = await svc(['template', 'check'], env, undefined, dir);
    expect(text.stdout).toMatch(/^lib\/env\.mjs\s+managed\s+outdated: the template changed/m);
    expect(text.stdout).toMatch(/Drift: 1 outdated, 1 changed here, 0 missing/);

    const updated = await svc(['init', '--current-dir', '--skip-prompts'], env, undefined, dir);
    expect(updated.exitCode, updated.stderr).toBe(0);
    expect(updated.stdout).toMatch(/1 updated/);
    expect(await readFile(join(dir, 'lib/bff.mjs.bak'), 'utf8')).toBe('// mine now\n');
    await expect(stat(join(dir, 'lib/env.mjs.bak'))).rejects.toThrow();
    expect((await svc(['template', 'check'], env, undefined, dir)).exitCode).toBe(0);
  });

  it('scaffolds --from a local folder or a git URL (a branch or tag after #), adding what the project needs', async () => {
    const env = await envFor();
    const source = await mkdtemp(join(root, 'source-'));
    await mkdir(join(source, 'web'));
    await writeFile(join(source, 'package.json'), JSON.stringify({ name: '{{appKey}}', scripts: { dev: 'node web/main.mjs' } }, null, 2));
    await writeFile(join(source, 'web/main.mjs'), 'console.log("{{appName}} from a custom template");\n');
    await mkdir(join(source, 'node_modules'));
    await writeFile(join(source, 'node_modules/ignored.js'), '');

    const cwd = await mkdtemp(join(root, 'from-'));
    const local = await svc(['init', 'custom', '--skip-prompts', '--from', source], env, undefined, cwd);
    expect(local.exitCode, local.stderr).toBe(0);
    const dir = join(cwd, 'custom');
    expect(await readFile(join(dir, 'web/main.mjs'), 'utf8')).toBe('console.log("custom from a custom template");\n');
    const files = await filesUnder(dir);
    expect(files).toEqual(expect.arrayContaining(['svc.config.ts', 'src/svc.config/object-types.ts', 'AGENTS.md', 'web/main.mjs']));
    expect(files).not.toContain('server.mjs');
    expect(files).not.toContain('node_modules/ignored.js');
    expect((await readJson(join(dir, 'svc.project.json'))).template.source).toBe(source);
    const drift = await svc(['template', 'check'], env, undefined, dir);
    expect(drift.exitCode).toBe(0);
    expect(drift.stdout).toContain(`Scaffolded from ${source}: only the agent assets are compared`);
    // Run again without --from, the project's own source is kept: nothing of the built-in template is added.
    const rerun = await svc(['init', '--current-dir', '--skip-prompts'], env, undefined, dir);
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    expect(rerun.stdout).toMatch(/^files\s+4 unchanged$/m);
    expect(await filesUnder(dir)).toEqual(files);
    expect((await readJson(join(dir, 'svc.project.json'))).template.source).toBe(source);

    // A git repository, cloned at a tag.
    const repo = await mkdtemp(join(root, 'repo-'));
    const inRepo = (args: string[]) => git('git', ['-c', 'user.name=Dev', '-c', 'user.email=dev@example.test', ...args], { cwd: repo });
    await inRepo(['init', '--quiet']);
    await writeFile(join(repo, 'package.json'), JSON.stringify({ scripts: { dev: 'node app.mjs' } }));
    await writeFile(join(repo, 'app.mjs'), '// v1\n');
    await inRepo(['add', '--all']);
    await inRepo(['commit', '--quiet', '-m', 'v1']);
    await inRepo(['tag', 'v1']);
    await writeFile(join(repo, 'app.mjs'), '// v2\n');
    await inRepo(['commit', '--quiet', '-am', 'v2']);
    const cloned = await svc(['init', 'cloned', '--skip-prompts', '--from', `file://${repo}#v1`], env, undefined, cwd);
    expect(cloned.exitCode, cloned.stderr).toBe(0);
    expect(await readFile(join(cwd, 'cloned/app.mjs'), 'utf8')).toBe('// v1\n');
    expect((await filesUnder(join(cwd, 'cloned'))).some((f) => f.startsWith('.git/'))).toBe(false);
    expect((await git('git', ['log', '--format=%s'], { cwd: join(cwd, 'cloned') })).stdout.trim()).toBe('Scaffold cloned with svc init');

    // A source that is no app (no "dev" script) is E005; one that does not exist or cannot be cloned is E305. Nothing is written.
    const notAnApp = await mkdtemp(join(root, 'not-an-app-'));
    await writeFile(join(notAnApp, 'package.json'), '{"scripts":{}}');
    const refused = await svc(['init', 'refused', '--skip-prompts', '--from', notAnApp], env, undefined, cwd);
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toBe('! the source has no package.json with a "dev" script, which svc dev runs\nError E005: Invalid project structure\n→ run verify\n');
    const missing = await svc(['init', 'missing', '--skip-prompts', '--from', join(root, 'no-such-folder')], env, undefined, cwd);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('Error E305: Invalid input: --from');
    const unreachable = await svc(['init', 'unreachable', '--skip-prompts', '--from', `file://${root}/no-such-repo.git`], env, undefined, cwd);
    expect(unreachable.exitCode).toBe(2);
    expect(unreachable.stderr).toMatch(/Error E305: Invalid input: --from file:\/\/.+: git clone failed: .+/);
    expect((await readdir(cwd)).sort()).toEqual(['cloned', 'custom']);
  });

  it('clones --from an ssh URL, scp-like or ssh://, through the ssh program git is given', async () => {
    // No SSH server runs here: git's own ssh hook (GIT_SSH_COMMAND, the "simple" variant: host, then
    // the remote command) gets a program that runs the remote command on this machine, so the URL
    // forms svc hands to git take git's real ssh transport end to end.
    const bin = await mkdtemp(join(root, 'ssh-bin-'));
    const fakeSsh = join(bin, 'ssh-here');
    await writeFile(fakeSsh, '#!/bin/sh\n# $1 is the host; $2 the command git runs there.\nexec sh -c "$2"\n', { mode: 0o755 });
    const env = { ...(await envFor()), GIT_SSH_COMMAND: fakeSsh, GIT_SSH_VARIANT: 'simple' };
    const repo = await mkdtemp(join(root, 'ssh-repo-'));
    const inRepo = (args: string[]) => git('git', ['-c', 'user.name=Dev', '-c', 'user.email=dev@example.test', ...args], { cwd: repo });
    await inRepo(['init', '--quiet', '--initial-branch', 'main']);
    await writeFile(join(repo, 'package.json'), JSON.stringify({ scripts: { dev: 'node app.mjs' } }));
    await writeFile(join(repo, 'app.mjs'), '// over ssh\n');
    await inRepo(['add', '--all']);
    await inRepo(['commit', '--quiet', '-m', 'first']);

    const cwd = await mkdtemp(join(root, 'from-ssh-'));
    for (const [name, from] of [
      ['scp-like', `git@example.test:${repo}`],
      ['ssh-url', `ssh://git@example.test${repo}#main`],
    ] as const) {
      const cloned = await svc(['init', name, '--skip-prompts', '--no-agent', '--from', from], env, undefined, cwd);
      expect(cloned.exitCode, cloned.stderr).toBe(0);
      expect(await readFile(join(cwd, name, 'app.mjs'), 'utf8')).toBe('// over ssh\n');
      expect((await readJson(join(cwd, name, 'svc.project.json'))).template.source).toBe(from);
    }
    // A host that refuses (the ssh program fails) is E305 naming the clone, and nothing is written.
    const refusing = join(bin, 'ssh-refused');
    await writeFile(refusing, '#!/bin/sh\necho "Permission denied (publickey)." >&2\nexit 255\n', { mode: 0o755 });
    const refused = await svc(['init', 'refused', '--skip-prompts', '--no-agent', '--from', `git@example.test:${repo}`], { ...env, GIT_SSH_COMMAND: refusing }, undefined, cwd);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/Error E305: Invalid input: --from git@example\.test:.+: git clone failed: .+/);
    expect((await readdir(cwd)).sort()).toEqual(['scp-like', 'ssh-url']);
  });

  it('in a terminal, asks for the name, the package profile and the company tenant; --skip-prompts asks nothing', async () => {
    const env = await envFor({ token });
    const cwd = await mkdtemp(join(root, 'terminal-'));
    const key = `typed-${run}`;
    const asked = await inTerminal(['init', '--no-agent'], env, cwd, [
      [/App name/, `${key}\r`],
      [/Package profile/, '\u001b[B\r'],
      [/Company tenant of the app/, '\r'],
    ]);
    expect(asked.exitCode, asked.output).toBe(0);
    const first = (await stack.request('GET', '/v4/identity/tenants', { as: ADMIN })).body.data.find((t: any) => t.roles.includes('tenant-admin'));
    expect(await readJson(join(cwd, key, 'svc.project.json'))).toMatchObject({
      app: { key },
      packageProfile: 'internal',
      tenancy: { companyTenant: { id: first.id, slug: first.slug } },
    });
    expect(asked.output).toMatch(new RegExp(`app\\s+created ${key} in tenant ${first.slug}`));

    const unnamed = await inTerminal(['init', '--skip-prompts'], env, cwd, []);
    expect(unnamed.exitCode).toBe(2);
    expect(unnamed.output).toContain('Error E303: Required field missing: [name]');
    const named = await inTerminal(['init', `quiet-${run}`, '--skip-prompts', '--no-agent'], env, cwd, []);
    expect(named.exitCode, named.output).toBe(0);
    expect(named.output).not.toContain('Package profile');
    expect(named.output).toMatch(/app\s+not enrolled: no company tenant: pass --company-tenant, or run svc tenant select/);
    expect((await readJson(join(cwd, `quiet-${run}`, 'svc.project.json'))).packageProfile).toBe('external');
  });

  it('refuses bad input with a clear error and writes nothing', async () => {
    const env = await envFor({ token });
    const cwd = await mkdtemp(join(root, 'bad-'));
    await mkdir(join(cwd, 'taken'));
    await writeFile(join(cwd, 'taken/file.txt'), 'x');
    const cases: Array<[string[], number, string]> = [
      [['init'], 2, 'Error E303: Required field missing: [name]'],
      [['init', 'taken', '--skip-prompts'], 2, 'exists and is not empty: to scaffold into it, run svc init --current-dir there'],
      [['init', 'bad<name>', '--skip-prompts'], 2, 'app name "bad<name>" must start with a letter or digit'],
      [['init', 'x', '--skip-prompts', '--parent-tenant', 'acme'], 2, '--parent-tenant places a child tenant'],
      [['init', 'x', '--skip-prompts', '--package-profile', 'public'], 2, "Error E305: Invalid input: option '--package-profile <profile>' argument 'public' is invalid"],
      [['init', 'x', '--skip-prompts', '--tenant', 'acme', '--company-tenant', 'globex'], 2, '--tenant and --company-tenant name different tenants'],
      [['init', 'x', '--skip-prompts', '--company-tenant', 'no-such-tenant'], 6, 'Error E204: Permission denied'],
    ];
    for (const [args, exitCode, message] of cases) {
      const result = await svc(args, env, undefined, cwd);
      expect(result.exitCode, `${args.join(' ')}: ${result.stderr}`).toBe(exitCode);
      expect(result.stderr, args.join(' ')).toContain(message);
    }
    expect(await readdir(cwd)).toEqual(['taken']);
    expect(await enrollment('x')).toEqual([]);
  });
});
