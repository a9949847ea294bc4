import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newSecretsKey, SECRETS_KEY_BYTES } from '../secrets/secret-box.ts';
import { stateDir } from './state-dir.ts';

/**
 * The operator key of development and tests, kept in the state directory (`dev-secrets/secrets-key`,
 * mode 0600) so that what one process sealed the next one opens, and every test stack of a run
 * shares it. Made once: the file appears whole (written aside, then linked into place), and of
 * processes starting together the first to link it wins. Production gives `SECRETS_KEY` instead.
 */
export function devSecretsKey(): Buffer {
  const dir = stateDir('dev-secrets');
  const file = join(dir, 'secrets-key');
  const aside = join(dir, `secrets-key.${process.pid}.tmp`);
  writeFileSync(aside, newSecretsKey().toString('base64'), { mode: 0o600 });
  try {
    linkSync(aside, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(aside, { force: true });
  }
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== SECRETS_KEY_BYTES) throw new Error(`${file} does not hold a ${SECRETS_KEY_BYTES}-byte base64 key: remove it to make a new one`);
  return key;
}
