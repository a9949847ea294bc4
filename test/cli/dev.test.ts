import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startTestStack, type TestStack } from '../harness/stack.ts';
import { freePort } from '../../scripts/stack/process.ts';
import { expiredToken, startSvc, svc } from './svc.ts';

/** `svc dev` through the real process: where it refuses to start and why, and the dev server it runs. */
describe('svc dev', { timeout: 180_000 }, () => {
  let stack: TestStack;
  let root: string;
  let project: string;
  let env: Record<string, string>;
  let envFile: string;

  /** .env.local as `svc init` wrote it, with a client id as `svc provision idp` would add. */
  const resetEnvFile = async () => writeFile(join(project, '.env.local'), envFile.replace(/^SVC_IDP_CLIENT_ID=$/m, 'SVC_IDP_CLIENT_ID=client-of-the-app'));
  const dev = (args: string[], extra: Record<string, string | undefined> = {}, cwd = project) => svc(['dev', ...args], { ...env, ...extra }, undefined, cwd);

  beforeAll(async () => {
    stack = await startTestStack();
    root = await mkdtemp(join(tmpdir(), 'svc-dev-'));
    env = { HOME: root, BASE_URL_PUBLIC_API: stack.url, SVC_TOKEN: await stack.token(ADMIN) };
    const init = await svc(['init', 'devapp', '--skip-prompts', '--no-agent'], { HOME: root, BASE_URL_PUBLIC_API: stack.url }, undefined, root);
    expect(init.exitCode, init.stderr).toBe(0);
    project = join(root, 'devapp');
    envFile = await readFile(join(project, '.env.local'), 'utf8');
    // The app reads the platform's address from .env.local; the checks must not take it from the client's environment.
    delete env['BASE_URL_PUBLIC_API'];
  });
  afterAll(async () => {
    await stack?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('E001 outside a project, with or without checks', async () => {
    const outside = await mkdtemp(join(root, 'outside-'));
    for (const args of [[], ['--skip-checks']]) {
      const result = await dev(args, {}, outside);
      expect(result.exitCode).toBe(3);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe('Error E001: Not in an svc project\n→ run init or go to an existing project directory\n');
    }
  });

  it('E005 naming what is wrong with the structure; E006 when svc.config.ts does not load', async () => {
    const manifest = await readFile(join(project, 'svc.project.json'), 'utf8');
    const pkg = await readFile(join(project, 'package.json'), 'utf8');
    const config = await readFile(join(project, 'svc.config.ts'), 'utf8');
    try {
      await rm(join(project, 'svc.project.json'));
      await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'devapp', scripts: { start: 'node server.mjs' } }));
      const broken = await dev([], {}, join(project, 'public'));
      expect(broken.exitCode).toBe(3);
      expect(broken.stderr).toBe(
        '! svc.project.json is missing (svc init --current-dir writes it)\n! package.json has no "dev" script\nError E005: Invalid project structure\n→ run verify\n',
      );
      await writeFile(join(project, 'svc.project.json'), manifest);
      await writeFile(join(project, 'package.json'), pkg);
      await writeFile(join(project, 'svc.config.ts'), 'export default {\n');
      const unloadable = await dev([]);
      expect(unloadable.exitCode).toBe(3);
      expect(unloadable.stderr).toMatch(/^Error E006: Failed to load configuration: svc\.config\.ts: .+\n→ check `\.env\.local` and the config file for syntax errors\n$/);
    } finally {
      await writeFile(join(project, 'svc.project.json'), manifest);
      await writeFile(join(project, 'package.json'), pkg);
      await writeFile(join(project, 'svc.config.ts'), config);
    }
  });

  it('checks the env (E002, E003), the platform (E201), the login (E101, E102) and the port before it starts', async () => {
    await writeFile(join(project, '.env.local'), envFile);
    const noClient = await dev([]);
    expect(noClient.exitCode).toBe(3);
    expect(noClient.stderr).toBe(
      "SVC_IDP_CLIENT_ID comes from svc provision idp, which registers the app's sign-in client and writes it to .env.local.\n" +
        'Error E002: SVC_IDP_CLIENT_ID environment variable not set\n→ set SVC_IDP_CLIENT_ID; tenant selection comes from login and tenant select, not from tenant ids in `.env.local`\n',
    );

    await rm(join(project, '.env.local'));
    const noFile = await dev([]);
    expect(noFile.exitCode).toBe(3);
    expect(noFile.stderr).toBe('Error E003: Configuration file not found: .env.local\n→ make sure the file exists; run init for a new project\n');

    await writeFile(join(project, '.env.local'), envFile.replace(/^BASE_URL_PUBLIC_API=.*$/m, 'BASE_URL_PUBLIC_API=http://127.0.0.1:9').replace(/^SVC_IDP_CLIENT_ID=$/m, 'SVC_IDP_CLIENT_ID=x'));
    const unreachable = await dev([]);
    expect(unreachable.exitCode).toBe(8);
    expect(unreachable.stderr).toContain('Error E201: Platform API unreachable: http://127.0.0.1:9\n');

    await resetEnvFile();
    const notLoggedIn = await dev([], { SVC_TOKEN: undefined });
    expect(notLoggedIn.exitCode).toBe(4);
    expect(notLoggedIn.stderr).toMatch(/Error E101: Not logged in\n→ run login\n$/);
    expect(notLoggedIn.stderr).toContain(`✓ platform: ${stack.url} is ok`);
    const expired = await dev([], { SVC_TOKEN: expiredToken() });
    expect(expired.exitCode).toBe(4);
    expect(expired.stderr).toMatch(/Error E102: Access token expired\n→ run login to refresh\n$/);

    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const taken = await dev(['--port', String(port)]);
      expect(taken.exitCode).toBe(2);
      expect(taken.stderr).toContain(`Error E305: Invalid input: port ${port} is in use: stop what runs there, or pass --port <another>\n`);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
    const badPort = await dev(['--port', 'http']);
    expect(badPort.exitCode).toBe(2);
    expect(badPort.stderr).toContain('--port must be a whole number of at least 1, not "http"');

    // A variable the environment has counts as set, as the app's server reads it.
    await writeFile(join(project, '.env.local'), envFile);
    const fromEnvironment = await dev(['--port', String(port)], { SVC_IDP_CLIENT_ID: 'from-the-environment', SVC_TOKEN: undefined });
    expect(fromEnvironment.stderr).toContain('✓ env: BASE_URL_PUBLIC_API, SVC_IDP_CLIENT_ID set');
    expect(fromEnvironment.stderr).toContain('Error E101');
  });

  it('--skip-checks runs the dev script at once: here the server itself stops for the missing client id', async () => {
    await writeFile(join(project, '.env.local'), envFile);
    const result = await dev(['--skip-checks', '--no-turbo', '--port', String(await freePort())], { SVC_TOKEN: undefined });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).not.toContain('Error E');
    expect(result.stdout + result.stderr).toContain('SVC_IDP_CLIENT_ID is not set: add it to .env.local');
  });

  it('serves the app on --port, restarts it on changes (--turbo, the default) and stops it with the client', async () => {
    await resetEnvFile();
    const port = await freePort();
    const running = startSvc(['dev', '--turbo', '--port', String(port)], env, project);
    try {
      await running.waitFor(new RegExp(`devapp is running at http://localhost:${port}`));
      expect(running.output()).toContain('✓ env: BASE_URL_PUBLIC_API, SVC_IDP_CLIENT_ID set');
      expect(running.output()).toContain(`✓ port: ${port} is free`);
      const page = await fetch(`http://127.0.0.1:${port}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<title>devapp</title>');
      expect(await (await fetch(`http://localhost:${port}/auth/session`)).json()).toEqual({ signedIn: false });
      const api = await fetch(`http://127.0.0.1:${port}/api/svc/v3/resources?type=project`);
      expect(api.status).toBe(401);
      expect(await api.json()).toEqual({ error: { code: 'UNAUTHORIZED', message: 'sign in first' } });
      expect((await fetch(`http://127.0.0.1:${port}/../svc.project.json`)).status).toBe(404);

      await appendFile(join(project, 'lib/env.mjs'), '\n');
      await running.waitFor(/is running at[\s\S]*Restarting[\s\S]*is running at/);
    } finally {
      expect(await running.stop()).toBe(0);
    }
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  });

  it('--no-turbo serves without watching', async () => {
    await resetEnvFile();
    const port = await freePort();
    const running = startSvc(['dev', '--no-turbo', '--port', String(port)], env, project);
    try {
      await running.waitFor(/devapp is running at/);
      expect(running.output()).not.toContain('restarts on changes');
      await appendFile(join(project, 'lib/env.mjs'), '\n');
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(running.output()).not.toContain('Restarting');
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
    } finally {
      expect(await running.stop('SIGINT')).toBe(0);
    }
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  });
});
