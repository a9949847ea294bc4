import { rmSync } from 'node:fs';
import { alreadyRunning, runningInstances } from './local-instance.ts';
import { stopLocalPostgres } from './postgres.ts';
import { stateDir } from '../../control-plane/app/state-dir.ts';
import { stopTemporalDevServer } from './temporal.ts';

/**
 * What `npm start` keeps between runs, by state name, and so what `npm start -- --reset` removes:
 * the private PostgreSQL cluster, the Temporal dev server's history, the built-in provider's
 * signing keys, the control plane's credential and the local blobs. Not the development secrets
 * key (test runs share it, and it seals nothing once the database is gone), built binaries (caches),
 * nor the state of test servers that may share the state directory.
 */
export const LOCAL_STATE = { postgres: 'pg-dev', temporal: 'temporal-dev', others: ['dev-identity', 'control-plane', 'blobs'] } as const;

/** Why the local state cannot be reset now (an `npm start` runs on it), or undefined. */
export function resetRefusal(): string | undefined {
  const running = runningInstances();
  if (!running.length) return undefined;
  return `cannot reset the local state while the platform runs on it: ${running.map(alreadyRunning).join('; ')}`;
}

/**
 * Removes the local state `npm start` keeps ({@link LOCAL_STATE}). The local PostgreSQL cluster
 * and Temporal dev server that an earlier start left running in the background serve no platform
 * once none runs: they are stopped before their files are removed. Answers the directories removed.
 */
export async function resetLocalState(log: (message: string) => void): Promise<string[]> {
  const refusal = resetRefusal();
  if (refusal) throw new Error(refusal);
  await stopLocalPostgres(LOCAL_STATE.postgres);
  await stopTemporalDevServer(LOCAL_STATE.temporal);
  const removed = [LOCAL_STATE.postgres, LOCAL_STATE.temporal, ...LOCAL_STATE.others].map((name) => stateDir(name));
  for (const dir of removed) rmSync(dir, { recursive: true, force: true });
  log(`reset the local state: removed ${removed.join(', ')}`);
  return removed;
}
