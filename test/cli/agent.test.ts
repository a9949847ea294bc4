import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { svc } from './svc.ts';

const AGENT_FILES = ['.agents/object-types.md', '.agents/platform-api.md', '.agents/workflow.md', 'AGENTS.md'];
const TEMPLATE_DIR = new URL('../../cli/templates/agent/', import.meta.url);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** `svc agent refresh` through the real process: local files only, no platform. */
describe('svc agent refresh', { timeout: 120_000 }, () => {
  let root: string;
  let project: string;
  let env: Record<string, string>;
  const inProject = (args: string[]) => svc(args, env, undefined, project);
  const manifest = async () => JSON.parse(await readFile(join(project, 'svc.project.json'), 'utf8'));
  const bundled = (path: string) => readFile(new URL(path, TEMPLATE_DIR), 'utf8');

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-agent-'));
    env = { HOME: root };
    const init = await svc(['init', 'agentless', '--skip-prompts', '--no-agent'], env, undefined, root);
    expect(init.exitCode, init.stderr).toBe(0);
    project = join(root, 'agentless');
  });
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('--check reports what would change and writes nothing (exit 9); then refresh installs the assets, and again finds nothing to do', async () => {
    const check = await inProject(['agent', 'refresh', '--check', '--format', 'json']);
    expect(check.exitCode).toBe(9);
    expect(check.json).toMatchObject({ projectDir: project, check: true, upToDate: false, summary: { create: 4, update: 0, conflict: 0, unchanged: 0 }, conflicts: [] });
    expect(check.json.files.map((f: any) => [f.path, f.action])).toEqual(AGENT_FILES.map((p) => [p, 'create']));
    expect(await readdir(project)).not.toContain('AGENTS.md');
    expect((await manifest()).template.agent).toBe(false);

    const refreshed = await inProject(['agent', 'refresh']);
    expect(refreshed.exitCode, refreshed.stderr).toBe(0);
    expect(refreshed.stdout).toMatch(/^AGENTS\.md\s+created\s+-$/m);
    expect(refreshed.stdout).toContain('The agent assets are up to date.');
    for (const path of AGENT_FILES) expect(await readFile(join(project, path), 'utf8'), path).toBe(await bundled(path));
    const written = await manifest();
    expect(written.template.agent).toBe(true);
    expect(written.template.files['AGENTS.md']).toBe(sha256(await bundled('AGENTS.md')));

    const again = await inProject(['agent', 'refresh', '--check']);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toMatch(/^\.agents\/workflow\.md\s+up to date\s+-$/m);
    // The assets are part of the drift now.
    const drift = await inProject(['template', 'check', '--format', 'json']);
    expect(drift.json.files.filter((f: any) => f.kind === 'agent').map((f: any) => f.status)).toEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged']);
  });

  it('leaves a file changed here (exit 9) unless --force, which saves it as .bak first; a file only the template changed is updated', async () => {
    await writeFile(join(project, 'AGENTS.md'), '# Our own rules\n');
    // What an older client wrote, recorded as such: the template has moved on since.
    const older = '# An older version\n';
    await writeFile(join(project, '.agents/workflow.md'), older);
    const m = await manifest();
    m.template.files['.agents/workflow.md'] = sha256(older);
    await writeFile(join(project, 'svc.project.json'), JSON.stringify(m, null, 2));

    const check = await inProject(['agent', 'refresh', '--check']);
    expect(check.exitCode).toBe(9);
    expect(check.stdout).toMatch(/^AGENTS\.md\s+conflict: changed here\s+-$/m);
    expect(check.stdout).toMatch(/^\.agents\/workflow\.md\s+update\s+-$/m);
    expect(check.stdout).toContain("2 agent asset(s) differ from the client's: run svc agent refresh --force.");

    const left = await inProject(['agent', 'refresh', '--format', 'json']);
    expect(left.exitCode).toBe(9);
    expect(left.json).toMatchObject({ upToDate: false, conflicts: ['AGENTS.md'], summary: { update: 1, conflict: 1 } });
    expect(await readFile(join(project, 'AGENTS.md'), 'utf8')).toBe('# Our own rules\n');
    expect(await readFile(join(project, '.agents/workflow.md'), 'utf8')).toBe(await bundled('.agents/workflow.md'));
    expect(await readdir(join(project, '.agents'))).not.toContain('workflow.md.bak');

    const forced = await inProject(['agent', 'refresh', '--force']);
    expect(forced.exitCode, forced.stdout).toBe(0);
    expect(forced.stdout).toMatch(/^AGENTS\.md\s+replaced \(yours saved\)\s+AGENTS\.md\.bak$/m);
    expect(await readFile(join(project, 'AGENTS.md.bak'), 'utf8')).toBe('# Our own rules\n');
    expect(await readFile(join(project, 'AGENTS.md'), 'utf8')).toBe(await bundled('AGENTS.md'));

    // A second forced replacement keeps the first backup.
    await writeFile(join(project, 'AGENTS.md'), '# Changed again\n');
    expect((await inProject(['agent', 'refresh', '--force'])).exitCode).toBe(0);
    expect(await readFile(join(project, 'AGENTS.md.bak'), 'utf8')).toBe('# Our own rules\n');
    expect(await readFile(join(project, 'AGENTS.md.bak.2'), 'utf8')).toBe('# Changed again\n');
  });

  it('is E001 outside a project and E304 for an unknown --format', async () => {
    const outside = await svc(['agent', 'refresh', '--format', 'json'], env, undefined, root);
    expect(outside.exitCode).toBe(3);
    expect(outside.json.error).toMatchObject({ code: 'E001', message: 'Not in an svc project' });
    const format = await inProject(['agent', 'refresh', '--format', 'yaml']);
    expect(format.exitCode).toBe(2);
    expect(format.stderr).toContain('Error E304: Invalid format: --format yaml');
  });
});
