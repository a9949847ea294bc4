import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, readText } from './process.ts';
import { stateDir } from '../../control-plane/app/state-dir.ts';

/**
 * Which `npm start` processes run on this state directory: one file per role in
 * `<state dir>/npm-start/<role>.json`, naming the process and its URL, so that a second start of a
 * role says which process runs it instead of failing on a port, and `--reset` refuses while any runs.
 */

export interface RunningInstance {
  role: string;
  pid: number;
  url: string;
  /** ISO time the process started. */
  startedAt: string;
}

const DIR = 'npm-start';

/** Whether `pid` is alive and runs `scripts/start.ts` (a pid recorded by a crashed start may belong to another program since). */
function runsStart(pid: number): boolean {
  if (!(pid > 0 && isAlive(pid))) return false;
  if (!existsSync('/proc/self')) return true;
  return readText(`/proc/${pid}/cmdline`).split('\0').some((arg) => arg.endsWith('scripts/start.ts'));
}

function readInstance(file: string): RunningInstance | undefined {
  try {
    const instance = JSON.parse(readFileSync(file, 'utf8')) as RunningInstance;
    return runsStart(instance.pid) ? instance : undefined;
  } catch {
    return undefined;
  }
}

/** The `npm start` processes running on this state directory, any role. */
export function runningInstances(): RunningInstance[] {
  const dir = stateDir(DIR);
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .flatMap((name) => readInstance(join(dir, name)) ?? []);
}

/**
 * Records this process as the one running `role`, and forgets it when the process exits; answers
 * the process already running it instead, if one is alive. A record left by a process that died is
 * taken over.
 */
export function claimInstance(role: string, url: string): RunningInstance | undefined {
  const file = join(stateDir(DIR), `${role}.json`);
  const mine: RunningInstance = { role, pid: process.pid, url, startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    const running = readInstance(file);
    if (running && running.pid !== process.pid) return running;
    if (!running) rmSync(file, { force: true });
    try {
      // `wx`: of two starts at the same moment, one writes the record and the other reads it.
      writeFileSync(file, JSON.stringify(mine), { flag: 'wx' });
      process.once('exit', () => {
        if (readInstance(file)?.pid === process.pid) rmSync(file, { force: true });
      });
      return undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return readInstance(file);
}

/** The line that says a role already runs, and how to stop it. */
export function alreadyRunning(instance: RunningInstance): string {
  return `the platform (role ${instance.role}) is already running: pid ${instance.pid}, ${instance.url}, started ${instance.startedAt}. Use it, or stop it first (Ctrl-C in its terminal, or kill ${instance.pid})`;
}
