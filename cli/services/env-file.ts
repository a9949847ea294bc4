import { readFile } from 'node:fs/promises';
import { CliError } from '../errors.ts';

/**
 * `.env`-style files (`KEY=value` lines, `#` comments, optional `export ` and quotes), read and
 * changed line by line: an update rewrites only the lines of the keys it sets and appends new
 * keys at the end, so comments, blank lines and unrelated keys stay as they were.
 */

const LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/;

const unquote = (raw: string) => /^(['"])(.*)\1$/.exec(raw)?.[2] ?? raw.replace(/\s+#.*$/, '');

/** The variables of an env file's text (the last line of a key wins, as shells read it). */
export function parseEnv(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const match = LINE.exec(line);
    if (match) values[match[1]!] = unquote(match[2]!);
  }
  return values;
}

/** A value as written in the file: quoted when it has spaces, quotes or `#`. */
const written = (value: string) => (/[\s"'#]/.test(value) ? JSON.stringify(value) : value);

/**
 * `text` with each key of `updates` set: its existing line rewritten in place, else a new line at
 * the end (after `comments[key]`, a comment line, when given). `onlyMissing` keeps every key that
 * already has a non-empty value.
 */
export function updateEnv(text: string, updates: Record<string, string>, options: { onlyMissing?: boolean; comments?: Record<string, string> } = {}): string {
  const lines = text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/);
  const pending = new Map(Object.entries(updates));
  const current = parseEnv(text);
  for (let i = 0; i < lines.length; i++) {
    const key = LINE.exec(lines[i]!)?.[1];
    if (!key || !pending.has(key)) continue;
    if (!(options.onlyMissing && current[key])) lines[i] = `${key}=${written(pending.get(key)!)}`;
    pending.delete(key);
  }
  for (const [key, value] of pending) {
    const comment = options.comments?.[key];
    if (comment) lines.push(`# ${comment}`);
    lines.push(`${key}=${written(value)}`);
  }
  return lines.join('\n') + '\n';
}

/** The variables of an env file; undefined when it does not exist, E006 when it cannot be read. */
export async function readEnvFile(path: string): Promise<Record<string, string> | undefined> {
  try {
    return parseEnv(await readFile(path, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError('E006', { details: `${path}: ${(error as Error).message}` });
  }
}
