import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { bunExecutable } from '../../scripts/stack/bun.ts';
import { until } from './until.ts';

/** A real platform process started by {@link startMainProcess}. */
export interface MainProcess {
  child: ChildProcess;
  /** Its stdout and stderr so far. */
  output: () => string;
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
}

/**
 * The production entry point as a deployment runs it: `main.ts --role <role>` on Node (the image's
 * entry point) or on Bun (the chart's edge), with exactly the settings of `env` (and PATH, HOME), in
 * a process group of its own (`killProcessGroup` ends it with its children). Resolves once the
 * process says it is ready; `started` receives the child first, so that a caller can end it even
 * when it never gets ready.
 */
export async function startMainProcess(
  role: 'all' | 'edge' | 'control-plane',
  env: Record<string, string>,
  options: { runtime: 'node' | 'bun'; started?: (child: ChildProcess) => void },
): Promise<MainProcess> {
  const [command, args] = options.runtime === 'bun' ? [bunExecutable(), ['main.ts']] : ['node', ['--import', 'tsx', 'main.ts']];
  const child = spawn(command, [...args, '--role', role], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  options.started?.(child);
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const ready = role === 'control-plane' ? 'control plane (tRPC) listening on' : 'platform ready on';
  const ended = () => child.exitCode !== null || child.signalCode !== null;
  await until(async () => output.includes(ready) || ended(), (done) => done, 90_000);
  if (ended()) throw new Error(`the ${role} process exited before it was ready: ${output}`);
  return { child, output: () => output, exited };
}
