// Installs node_modules when missing or when package-lock.json changed since the last install.
// Plain Node ESM: it runs before any dependency exists.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const lockFile = join(root, 'package-lock.json');
const modulesDir = join(root, 'node_modules');
const stampFile = join(modulesDir, '.deps-stamp');

/** sha256 of package-lock.json, or undefined when there is none. */
function lockHash() {
  if (!existsSync(lockFile)) return undefined;
  return createHash('sha256').update(readFileSync(lockFile)).digest('hex');
}

function readStamp() {
  try {
    return readFileSync(stampFile, 'utf8').trim();
  } catch {
    return undefined;
  }
}

function npm(args) {
  const npmCli = process.env.npm_execpath;
  const [command, argv] =
    npmCli && /\.c?js$/.test(npmCli) ? [process.execPath, [npmCli, ...args]] : ['npm', args];
  const result = spawnSync(command, argv, { cwd: root, stdio: 'inherit' });
  if (result.error) throw result.error;
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const before = lockHash();
if (!existsSync(modulesDir) || before === undefined || readStamp() !== before) {
  npm(before === undefined ? ['install', '--no-audit', '--no-fund'] : ['ci', '--no-audit', '--no-fund']);
  const after = lockHash();
  if (after !== undefined) {
    mkdirSync(modulesDir, { recursive: true });
    writeFileSync(stampFile, `${after}\n`);
  }
}
