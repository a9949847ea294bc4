import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Roles that run on Node whatever runs the edge: Temporal's worker SDK and the Kubernetes client support Node only. */
export type NodeRole = 'worker' | 'operator';

export const isNodeRole = (role: string): role is NodeRole => role === 'worker' || role === 'operator';

/** Starts `scripts/start.ts --role <role>` on Node (as the image runs it), with `env` over this process's environment. */
export function spawnNodeRole(role: NodeRole, env: Record<string, string>, stdio: StdioOptions): ChildProcess {
  const script = fileURLToPath(new URL('../start.ts', import.meta.url));
  return spawn('node', ['--max-semi-space-size=64', '--import', 'tsx', script, '--role', role], {
    // SVC_PARENT_PID: the child stops when this process is gone (scripts/start.ts).
    env: { ...process.env, ...env, SVC_ROLE: role, SVC_PARENT_PID: String(process.pid) },
    stdio,
  });
}
