import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { readTokens } from '../config.ts';
import { CliError, invalidInput } from '../errors.ts';
import { createApiClient, tokenExpired } from './api-client.ts';
import { readEnvValues } from './env-file.ts';
import { needsRefresh } from './login.service.ts';
import type { ProjectConfig } from './project.service.ts';

export interface DevCheck {
  name: 'env' | 'platform' | 'login' | 'port';
  detail: string;
}

/**
 * The variables the app needs, from the environment or the project's env file (the environment
 * wins, as the app's server reads them): E002 naming the first required variable without a
 * value, E003 instead when the file is missing too.
 */
export async function checkEnv(root: string, config: ProjectConfig, onMissing?: (name: string) => void): Promise<{ values: Record<string, string>; check: DevCheck }> {
  const file = await readEnvValues(join(root, config.env.file));
  const values: Record<string, string> = { ...file };
  for (const [name, value] of Object.entries(process.env)) if (value) values[name] = value;
  const missing = config.env.required.find((name) => !values[name]);
  if (missing && !file) throw new CliError('E003', { file: config.env.file });
  if (missing) {
    onMissing?.(missing);
    throw new CliError('E002', { var: missing });
  }
  return { values, check: { name: 'env', detail: `${config.env.required.join(', ')} set` } };
}

/** The platform answers `GET /health` at the app's address; E201 when it cannot be reached. */
export async function checkPlatform(baseUrl: string): Promise<DevCheck> {
  const api = createApiClient({ baseUrl: baseUrl.replace(/\/+$/, '') });
  const health = await api.request<{ status?: string }>('GET', '/health', { auth: false });
  return { name: 'platform', detail: `${baseUrl} is ${health.body?.status ?? 'up'}` };
}

/** The client is logged in (a token that has not expired, or can be refreshed); E101 or E102 otherwise. No call is made. */
export async function checkLogin(profile: string): Promise<DevCheck> {
  const fromEnv = process.env['SVC_TOKEN'] || undefined;
  if (fromEnv) {
    if (tokenExpired(fromEnv)) throw new CliError('E102');
    return { name: 'login', detail: 'SVC_TOKEN' };
  }
  const { tokens } = await readTokens(profile);
  if (!tokens) throw new CliError('E101');
  if (needsRefresh(tokens) && tokenExpired(tokens.accessToken) && !tokens.refreshToken) throw new CliError('E102');
  return { name: 'login', detail: `profile ${profile}` };
}

/** The port is free on the loopback address; E305 naming `--port` otherwise. */
export async function checkPort(port: number): Promise<DevCheck> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? invalidInput(`port ${port} is in use: stop what runs there, or pass --port <another>`) : error),
    );
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
  return { name: 'port', detail: `${port} is free` };
}

/**
 * Runs the project's `dev` script (`npm run dev`) in its own process group, with `PORT` and
 * `SVC_DEV_TURBO` (1 or 0) set, its output on this process's. A signal to this process (Ctrl-C)
 * ends the whole group and resolves to 0; otherwise resolves to the script's exit code.
 */
export function runDevServer(root: string, options: { port: number; turbo: boolean }): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'dev'], {
      cwd: root,
      stdio: 'inherit',
      detached: true,
      env: { ...process.env, PORT: String(options.port), SVC_DEV_TURBO: options.turbo ? '1' : '0', npm_config_update_notifier: 'false' },
    });
    let stopping = false;
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
    };
    const stop = (signal: NodeJS.Signals) => {
      stopping = true;
      signalGroup(signal);
    };
    const forward = { SIGINT: () => stop('SIGINT'), SIGTERM: () => stop('SIGTERM'), SIGHUP: () => stop('SIGHUP') };
    for (const [signal, handler] of Object.entries(forward)) process.on(signal, handler);
    child.once('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'ENOENT' ? invalidInput('npm is not installed: svc dev runs the project\'s "dev" script with it') : error);
    });
    child.once('exit', (code) => {
      for (const [name, handler] of Object.entries(forward)) process.off(name, handler);
      // What is left of the group (a server the script started) goes with it.
      signalGroup('SIGTERM');
      resolve(stopping ? 0 : (code ?? 1));
    });
  });
}
