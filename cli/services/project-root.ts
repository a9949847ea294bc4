import { access } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { CliError } from '../errors.ts';

// Kept apart from project.service.ts (and its schema library) so that commands which only need the
// project folder load nothing more when the client starts.

export const CONFIG_FILE = 'svc.config.ts';
export const MANIFEST_FILE = 'svc.project.json';
export const ENV_FILE = '.env.local';

const exists = (path: string) => access(path).then(() => true, () => false);

/** The nearest folder from `start` upwards in which `marks` finds a file. */
async function nearest(start: string, marks: (dir: string) => Promise<boolean>): Promise<string | undefined> {
  for (let dir = resolve(start); ; dir = dirname(dir)) {
    if (await marks(dir)) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * The project folder, the one rule of every command: the nearest folder from `start` upwards that
 * holds `svc.config.ts` or `svc.project.json`, else the nearest that holds `package.json` (an app
 * not made with `svc init`); undefined outside any. Its `.env.local` is the project's.
 */
export async function findProjectRoot(start = process.cwd()): Promise<string | undefined> {
  return (
    (await nearest(start, async (dir) => (await exists(join(dir, CONFIG_FILE))) || (await exists(join(dir, MANIFEST_FILE))))) ??
    (await nearest(start, (dir) => exists(join(dir, 'package.json'))))
  );
}

/** The project around `start`; E001 when there is none. */
export async function requireProjectRoot(start = process.cwd()): Promise<string> {
  const root = await findProjectRoot(start);
  if (!root) throw new CliError('E001');
  return root;
}

