import { readFileSync } from 'node:fs';

/**
 * Reads `KEY=value` lines of an env file into `process.env`, without replacing a variable the
 * environment already has (so `PORT=4000 npm run dev` wins over the file). Blank lines and `#`
 * comments are skipped; a value may be quoted. A missing file is no error.
 */
export function loadEnvFile(path) {
  let text;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT') return;
    throw error;
  }
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!match) continue;
    const [, name, raw] = match;
    const value = /^(['"])(.*)\1$/.exec(raw)?.[2] ?? raw.replace(/\s+#.*$/, '');
    if (process.env[name] === undefined) process.env[name] = value;
  }
}

/** The value of a variable the server cannot run without. */
export function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: add it to .env.local (svc dev names what is missing)`);
  return value;
}
