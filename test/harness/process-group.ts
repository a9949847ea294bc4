import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { TestStack } from './stack.ts';
import { devSecretsKey } from '../../control-plane/app/dev-secrets-key.ts';

/** SIGKILL to a detached child's whole process group (its own children too); a group already gone is fine. */
export function killProcessGroup(child: ChildProcess): void {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * A real platform process of `role` (`scripts/start.ts --role <role>`) on the stack's database,
 * Temporal task queue and blob store, with a state directory of its own (so that it is never
 * taken for another test's process of the same role), in a process group of its own
 * (`killProcessGroup` ends it with its children). `env` adds settings (the operator's kubeconfig).
 * Its stderr is printed when it ends other than by SIGKILL.
 */
export function startRoleProcess(stack: TestStack, role: 'worker' | 'operator', env: NodeJS.ProcessEnv = {}): ChildProcess {
  const stateDir = mkdtempSync(join(tmpdir(), `svc-${role}-`));
  const child = spawn('node_modules/.bin/tsx', ['scripts/start.ts', '--role', role], {
    env: {
      ...process.env,
      SVC_STATE_DIR: stateDir,
      // The run's operator key: what other processes sealed, this one opens.
      SECRETS_KEY: devSecretsKey().toString('base64'),
      DATABASE_URL: inject('databaseUrl'),
      TENANT_DATABASE_URL: inject('tenantDatabaseUrl'),
      TEMPORAL_ADDRESS: stack.temporal.address,
      TEMPORAL_NAMESPACE: stack.temporal.namespace,
      TEMPORAL_TASK_QUEUE: stack.temporal.taskQueue,
      SVC_BLOB_DIR: stack.blobRoot,
      HEALTH_PORT: '0',
      ...env,
    },
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (chunk) => (errors += chunk));
  child.on('exit', (code, signal) => {
    rmSync(stateDir, { recursive: true, force: true });
    if (signal !== 'SIGKILL') process.stderr.write(`${role} process exited (${code ?? signal}): ${errors.slice(-2000)}\n`);
  });
  return child;
}

/** A real `worker` process of the stack (see {@link startRoleProcess}). */
export const startWorkerProcess = (stack: TestStack): ChildProcess => startRoleProcess(stack, 'worker');
