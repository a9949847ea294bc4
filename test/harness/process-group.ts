import { spawn, type ChildProcess } from 'node:child_process';
import { inject } from 'vitest';
import type { TestStack } from './stack.ts';

/** SIGKILL to a detached child's whole process group (its own children too); a group already gone is fine. */
export function killProcessGroup(child: ChildProcess): void {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * A real `worker` process (`scripts/start.ts --role worker`) on the stack's database, task queue
 * and blob store, in a process group of its own (`killProcessGroup` ends it with its children).
 * Its stderr is printed when it ends other than by SIGKILL.
 */
export function startWorkerProcess(stack: TestStack): ChildProcess {
  const child = spawn('node_modules/.bin/tsx', ['scripts/start.ts', '--role', 'worker'], {
    env: {
      ...process.env,
      DATABASE_URL: inject('databaseUrl'),
      TENANT_DATABASE_URL: inject('tenantDatabaseUrl'),
      TEMPORAL_ADDRESS: stack.temporal.address,
      TEMPORAL_NAMESPACE: stack.temporal.namespace,
      TEMPORAL_TASK_QUEUE: stack.temporal.taskQueue,
      SVC_BLOB_DIR: stack.blobRoot,
      HEALTH_PORT: '0',
    },
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (chunk) => (errors += chunk));
  child.on('exit', (code, signal) => {
    if (signal !== 'SIGKILL') process.stderr.write(`worker process exited (${code ?? signal}): ${errors.slice(-2000)}\n`);
  });
  return child;
}
