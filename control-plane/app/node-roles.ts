import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { once } from 'node:events';

/** Roles that run on Node whatever runs the edge: Temporal's worker SDK and the Kubernetes client support Node only. */
export type NodeRole = 'worker' | 'operator';

export const isNodeRole = (role: string): role is NodeRole => role === 'worker' || role === 'operator';

/**
 * Starts `<script> --role <role>` on Node (as the image runs it) with `env` as its environment.
 * `script` is `main.ts` or `scripts/start.ts`, which read the role from `--role`.
 */
export function spawnNodeRole(script: string, role: NodeRole, env: NodeJS.ProcessEnv, stdio: StdioOptions): ChildProcess {
  return spawn('node', ['--max-semi-space-size=64', '--import', 'tsx', script, '--role', role], {
    // SVC_PARENT_PID: the child stops when this process is gone (main.ts).
    env: { ...env, SVC_ROLE: role, SVC_PARENT_PID: String(process.pid) },
    stdio,
  });
}

/**
 * Runs a role started on Bun as a Node process instead (its SDKs need Node), sharing this process's
 * terminal, and exits with that process's exit code.
 */
export async function handOffToNode(script: string, role: NodeRole, env: NodeJS.ProcessEnv): Promise<never> {
  const child = spawnNodeRole(script, role, env, 'inherit');
  // SIGTERM whatever arrived: a terminal's Ctrl-C reaches the child as well, and a second SIGINT would cut its shutdown short.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill('SIGTERM'));
  const [code] = await once(child, 'exit');
  process.exit(code ?? 1);
}
