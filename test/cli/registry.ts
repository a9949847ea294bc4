import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { killProcessGroup } from '../harness/process-group.ts';
import { REPO } from './package.ts';

/**
 * The release registry of the update tests: Verdaccio 5 (an npm registry server) on a fixed port
 * below 32768 (outside the ports the kernel hands out for outgoing connections), its
 * configuration and storage in a temporary folder, with no uplinks: it serves only what the
 * tests publish to it.
 */
export const TEST_REGISTRY_PORT = 24873;

export interface Registry {
  url: string;
  /** npm's user configuration (`npm_config_userconfig`) with a token that may publish. */
  npmrc: string;
  close(): Promise<void>;
}

export async function startRegistry(dir: string): Promise<Registry> {
  const url = `http://127.0.0.1:${TEST_REGISTRY_PORT}/`;
  await mkdir(join(dir, 'storage'), { recursive: true });
  const config = join(dir, 'config.yaml');
  await writeFile(
    config,
    [
      `storage: ${JSON.stringify(join(dir, 'storage'))}`,
      'auth:',
      '  htpasswd:',
      `    file: ${JSON.stringify(join(dir, 'htpasswd'))}`,
      '    max_users: 10',
      'uplinks: {}',
      'packages:',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(join(REPO, 'node_modules/.bin/verdaccio'), ['--config', config, '--listen', `127.0.0.1:${TEST_REGISTRY_PORT}`], {
    cwd: dir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'], HOME: dir },
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = once(child, 'exit');
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      killProcessGroup(child);
      await exited;
    }
  };
  try {
    for (const deadline = Date.now() + 60_000; ; ) {
      if (child.exitCode !== null) throw new Error(`Verdaccio exited (${child.exitCode}); is port ${TEST_REGISTRY_PORT} taken?\n${output}`);
      if (await fetch(`${url}-/ping`).then((r) => r.ok, () => false)) break;
      if (Date.now() > deadline) throw new Error(`Verdaccio did not answer on ${url} within 60 s:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // A user of the registry's own (htpasswd) store, and its token for npm publish.
    const created = await fetch(`${url}-/user/org.couchdb.user:release`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'release', password: 'release-password' }),
    });
    if (!created.ok) throw new Error(`Verdaccio refused the user: ${created.status} ${await created.text()}`);
    const { token } = (await created.json()) as { token: string };
    const npmrc = join(dir, 'npmrc');
    await writeFile(npmrc, `registry=${url}\n//127.0.0.1:${TEST_REGISTRY_PORT}/:_authToken=${token}\n`);
    return { url, npmrc, close };
  } catch (error) {
    await close();
    throw error;
  }
}
