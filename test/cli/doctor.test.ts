import { execa } from 'execa';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentFiles, appTemplateFiles, applySync, planSync, sha256, CLIENT_VERSION } from '../../cli/services/template.service.ts';
import { writeManifest } from '../../cli/services/project.service.ts';
import { ADMIN, startTestStack, type TestStack } from '../harness/stack.ts';
import { svc } from './svc.ts';

/** A project as svc init leaves it (the built-in template and the agent assets, its manifest, a git repository), with `.env.local`. */
async function scaffold(dir: string, env: Record<string, string>): Promise<void> {
  const files = [...(await appTemplateFiles({ appName: 'Doctor App', appKey: 'doctor-app' })), ...(await agentFiles())];
  const { hashes } = await applySync(dir, files, await planSync(dir, files, {}), { conflicts: 'skip' });
  await writeManifest(dir, {
    manifestVersion: 1,
    app: { name: 'Doctor App', key: 'doctor-app', id: null },
    packageProfile: 'external',
    tenancy: { companyTenant: null, parentTenant: null, childTenant: null },
    template: { source: 'builtin:app', clientVersion: CLIENT_VERSION, agent: true, files: hashes },
  });
  await writeFile(join(dir, '.env.local'), Object.entries(env).map(([k, v]) => `${k}=${v}`).join('\n') + '\n', { mode: 0o600 });
  await execa('git', ['init', '--quiet'], { cwd: dir });
}

/** The check lines of `svc doctor --simple`: `<status word> <name>: <detail>`, keyed by name. */
function checks(stdout: string): Record<string, string> {
  const lines = stdout.split('\n').filter((line) => /^(ok|fixed|warning|FAILED|skipped) [\w ]+: /.test(line));
  return Object.fromEntries(lines.map((line) => [/^\w+ ([\w ]+): /.exec(line)![1]!, line]));
}

/** `svc doctor` in projects on disk against the running platform. */
describe('svc doctor', { timeout: 120_000 }, () => {
  let stack: TestStack;
  let home: string;
  let token: string;

  beforeAll(async () => {
    stack = await startTestStack();
    home = await mkdtemp(join(tmpdir(), 'svc-doctor-'));
    token = await stack.token(ADMIN);
  });
  afterAll(async () => {
    await stack?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('passes every check in a healthy project, logged in to a reachable platform', async () => {
    const project = join(home, 'healthy');
    await mkdir(project);
    await scaffold(project, { BASE_URL_PUBLIC_API: stack.url, SVC_IDP_CLIENT_ID: 'doctor-app-client' });
    const run = await svc(['doctor', '--simple'], { HOME: home, SVC_TOKEN: token, BASE_URL_PUBLIC_API: stack.url }, undefined, project);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    const by = checks(run.stdout);
    expect(Object.keys(by)).toEqual(['project', 'template', 'structure', 'config', 'env', 'env ignored', 'env file mode', 'object types', 'platform', 'login', 'tokens file']);
    expect(by['project']).toBe(`ok project: ${project}`);
    expect(by['template']).toBe(`ok template: no drift from the client's template (${CLIENT_VERSION})`);
    expect(by['env']).toBe('ok env: BASE_URL_PUBLIC_API, SVC_IDP_CLIENT_ID set');
    expect(by['env ignored']).toBe('ok env ignored: .env.local is ignored by git');
    expect(by['env file mode']).toBe('ok env file mode: .env.local is readable by its owner only');
    expect(by['object types']).toBe('ok object types: 1 valid in src/svc.config/object-types.ts');
    expect(by['platform']).toBe(`ok platform: ${stack.url} is ok`);
    expect(by['login']).toBe(`ok login: ${ADMIN} (SVC_TOKEN)`);
    expect(run.stdout).toMatch(/\n11 ok, 0 warning\(s\), 0 failed, 0 skipped\n$/);
  });

  it('finds what is broken, and --fix repairs what can be repaired on this machine', async () => {
    const project = join(home, 'broken');
    await mkdir(project);
    await scaffold(project, { SVC_APP_KEY: 'doctor-app' });
    const bff = await readFile(join(project, 'lib/bff.mjs'));
    await rm(join(project, 'lib/bff.mjs'));
    await rm(join(project, 'svc.config.ts'));
    await writeFile(join(project, 'server.mjs'), '// changed here\n');
    await writeFile(join(project, '.gitignore'), 'node_modules/\n');
    await chmod(join(project, '.env.local'), 0o644);
    // The platform's address from the profile; logged in through the tokens file, which others can read.
    await mkdir(join(home, '.svc'), { recursive: true });
    await writeFile(join(home, '.svc/profiles.json'), JSON.stringify({ default: { baseUrl: stack.url } }));
    await writeFile(join(home, '.svc/tokens.json'), JSON.stringify({ default: { accessToken: token } }), { mode: 0o644 });
    await chmod(join(home, '.svc/tokens.json'), 0o644);
    const env = { HOME: home };

    const found = await svc(['doctor', '--simple'], env, undefined, project);
    expect(found.exitCode).toBe(9);
    const before = checks(found.stdout);
    expect(before['template']).toBe('FAILED template: E005 missing: lib/bff.mjs, svc.config.ts; edited here: server.mjs');
    expect(found.stdout).toContain('  Suggestion: svc doctor --fix writes missing and outdated unedited files from the template\n');
    expect(before['structure']).toBe('FAILED structure: E005 svc.config.ts is missing');
    expect(before['config']).toMatch(/^FAILED config: E006 Failed to load configuration: svc.config.ts: /);
    expect(before['env']).toBe('skipped env: svc.config.ts does not load');
    expect(before['env ignored']).toBe('warning env ignored: .env.local holds secrets and is not ignored by git');
    expect(before['env file mode']).toBe('warning env file mode: .env.local has mode 644: other users can read its secrets');
    expect(before['login']).toBe(`ok login: ${ADMIN} (profile default)`);
    expect(before['tokens file']).toBe(`FAILED tokens file: E006 ${join(home, '.svc/tokens.json')} has mode 644: other users can read the tokens`);

    const fixed = await svc(['doctor', '--fix', '--simple'], env, undefined, project);
    const after = checks(fixed.stdout);
    expect(after['template']).toBe("fixed template: wrote from the client's template: lib/bff.mjs, svc.config.ts; edited here: server.mjs");
    expect(after['structure']).toMatch(/^ok structure: /);
    expect(after['config']).toMatch(/^ok config: /);
    // BASE_URL_PUBLIC_API comes from the client's own setting; the sign-in client needs svc provision idp.
    expect(after['env']).toBe(`FAILED env: E002 SVC_IDP_CLIENT_ID environment variable not set (wrote BASE_URL_PUBLIC_API=${stack.url} to .env.local)`);
    expect(fixed.exitCode).toBe(9);
    expect(fixed.stdout).toContain("\n  Suggestion: run svc provision idp: it registers the app's sign-in client and writes SVC_IDP_CLIENT_ID to .env.local\n");
    expect(after['env ignored']).toBe('fixed env ignored: added .env.local to .gitignore');
    expect(after['env file mode']).toBe('fixed env file mode: .env.local was mode 644, now 600');
    expect(after['tokens file']).toBe(`fixed tokens file: ${join(home, '.svc/tokens.json')} was mode 644, now 600`);

    expect(await readFile(join(project, 'lib/bff.mjs'))).toEqual(bff);
    expect(await readFile(join(project, 'server.mjs'), 'utf8')).toBe('// changed here\n');
    const manifest = JSON.parse(await readFile(join(project, 'svc.project.json'), 'utf8'));
    expect(manifest.template.files['lib/bff.mjs']).toBe(sha256(bff));
    expect(await readFile(join(project, '.env.local'), 'utf8')).toContain(`\nBASE_URL_PUBLIC_API=${stack.url}\n`);
    expect(await readFile(join(project, '.gitignore'), 'utf8')).toBe('node_modules/\n.env.local\n');
    expect((await stat(join(project, '.env.local'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(home, '.svc/tokens.json'))).mode & 0o777).toBe(0o600);
  });

  it('fails outside a project, and when the platform does not answer and nobody is logged in', async () => {
    const outside = join(home, 'outside');
    await mkdir(outside);
    const run = await svc(['doctor', '--simple'], { HOME: outside, BASE_URL_PUBLIC_API: 'http://127.0.0.1:9' }, undefined, outside);
    expect(run.exitCode).toBe(9);
    const by = checks(run.stdout);
    expect(by['project']).toBe('FAILED project: E001 Not in an svc project');
    expect(by['template']).toBe('skipped template: not in a project');
    expect(by['platform']).toBe('FAILED platform: E201 Platform API unreachable: http://127.0.0.1:9');
    expect(by['login']).toBe('FAILED login: E101 Not logged in');
    expect(run.stdout).toMatch(/\n1 ok, 0 warning\(s\), 3 failed, 7 skipped\n$/);
  });

  it('reports invalid object types and outdated scaffold files, and updates an outdated unedited file with --fix', async () => {
    const project = join(home, 'outdated');
    await mkdir(project);
    await scaffold(project, { BASE_URL_PUBLIC_API: stack.url, SVC_IDP_CLIENT_ID: 'doctor-app-client' });
    await writeFile(join(project, 'src/svc.config/object-types.ts'), "export const objectTypes = [{ name: 'lower case', schema: { type: 'object' } }];\n");
    // The client wrote an older server.mjs, which nobody edited since: the template moved on.
    const older = '// an older server\n';
    await writeFile(join(project, 'server.mjs'), older);
    const manifestPath = join(project, 'svc.project.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8'));
    manifest.template.files['server.mjs'] = sha256(older);
    await writeFile(manifestPath, JSON.stringify(manifest, null, 2));
    const env = { HOME: home, SVC_TOKEN: token, BASE_URL_PUBLIC_API: stack.url };

    const run = await svc(['doctor', '--simple'], env, undefined, project);
    expect(run.exitCode).toBe(9);
    const by = checks(run.stdout);
    expect(by['template']).toBe('warning template: outdated: server.mjs');
    expect(by['object types']).toMatch(/^FAILED object types: E301 Invalid schema: objectTypes\[0\] \(lower case\)\.name: must be PascalCase/);

    const fixed = await svc(['doctor', '--fix', '--simple'], env, undefined, project);
    expect(checks(fixed.stdout)['template']).toBe('fixed template: wrote from the client\'s template: server.mjs');
    const template = (await appTemplateFiles({ appName: 'Doctor App', appKey: 'doctor-app' })).find((f) => f.path === 'server.mjs')!;
    expect(await readFile(join(project, 'server.mjs'))).toEqual(template.content);
  });
});
