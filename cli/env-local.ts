import { randomBytes } from 'node:crypto';
import { chmod, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { CliError, invalidInput } from './errors.ts';

/**
 * The project's `.env.local` in the current directory: the app's settings the client writes
 * (`SVC_VERTICAL_KEY`, the identity-provider client of `provision idp`) beside the developer's own.
 */

export const ENV_LOCAL = '.env.local';

/** The variables `provision idp` writes: the app's OAuth client at the platform's identity provider. */
export const IDP_ENV = {
  clientId: 'SVC_IDP_CLIENT_ID',
  clientSecret: 'SVC_IDP_CLIENT_SECRET',
  issuer: 'SVC_IDP_ISSUER',
} as const;

/** The app (vertical) key `vertical select` writes. */
export const VERTICAL_KEY_ENV = 'SVC_VERTICAL_KEY';

export const envLocalPath = (dir = process.cwd()) => join(dir, ENV_LOCAL);

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError('E006', { details: `${path}: ${(error as Error).message}` });
  }
}

/** The values of `.env.local` (none when it does not exist), parsed as dotenv does. */
export async function readEnvLocal(dir?: string): Promise<Record<string, string>> {
  const text = await readText(envLocalPath(dir));
  if (text === undefined) return {};
  try {
    return parseEnv(text) as Record<string, string>;
  } catch (error) {
    throw new CliError('E006', { details: `${envLocalPath(dir)}: ${(error as Error).message}` });
  }
}

/** A setting from the environment, else from `.env.local` (the environment wins, as a dev server has it). */
export async function projectSetting(name: string, dir?: string): Promise<string | undefined> {
  return process.env[name] || (await readEnvLocal(dir))[name] || undefined;
}

const ASSIGNMENT = /^(\s*(?:export\s+)?)([A-Za-z_][A-Za-z0-9_.-]*)\s*=/;

/**
 * A value as dotenv reads it back: bare when it is plain; else in single quotes (taken literally),
 * double quotes (a line break written `\n`) or backticks, whichever the value allows. dotenv has no
 * escapes for quotes, so a value that no quoting can carry is refused (E305).
 */
function quote(name: string, value: string): string {
  if (/^[\w.:/@+-]*$/.test(value)) return value;
  if (value.includes('\n')) {
    if (!value.includes('"') && !value.includes('\\')) return `"${value.replace(/\n/g, '\\n')}"`;
  } else {
    if (!value.includes("'")) return `'${value}'`;
    if (!value.includes('"') && !/\\[nr]/.test(value)) return `"${value}"`;
    if (!value.includes('`')) return `\`${value}\``;
  }
  throw invalidInput(`${name} cannot be written to ${ENV_LOCAL}: its value mixes quotes and line breaks that dotenv cannot read back`);
}

/**
 * The lines of a dotenv text with `values` set: a variable's first assignment takes the new value
 * (an `export ` prefix kept), later assignments of it are dropped, and variables it did not have are
 * appended; comments, blank lines and every other variable stay as they were. A multi-line quoted
 * value of another variable is kept whole.
 */
export function setEnvValues(text: string, values: Record<string, string>): string {
  const lines = text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/);
  const written = new Set<string>();
  const out: string[] = [];
  let openQuote: string | undefined;
  let dropping = false;
  for (const line of lines) {
    if (openQuote) {
      if (!dropping) out.push(line);
      if (closesQuote(line, openQuote)) openQuote = undefined;
      continue;
    }
    const match = ASSIGNMENT.exec(line);
    const name = match?.[2];
    const rest = match ? line.slice(match[0].length).trimStart() : '';
    const opener = rest[0] === '"' || rest[0] === "'" || rest[0] === '`' ? rest[0] : undefined;
    const multiLine = opener !== undefined && !closesQuote(rest.slice(1), opener);
    if (name && Object.hasOwn(values, name)) {
      dropping = true;
      if (multiLine) openQuote = opener;
      if (written.has(name)) continue;
      written.add(name);
      out.push(`${match[1]}${name}=${quote(name, values[name]!)}`);
      continue;
    }
    dropping = false;
    if (multiLine) openQuote = opener;
    out.push(line);
  }
  for (const [name, value] of Object.entries(values)) if (!written.has(name)) out.push(`${name}=${quote(name, value)}`);
  return out.join('\n') + '\n';
}

/** Whether `text` holds the closing `quote` of a value (one not escaped by a backslash). */
function closesQuote(text: string, quote: string): boolean {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === quote) return true;
  }
  return false;
}

/**
 * Sets `values` in `.env.local` (made with mode 0600 when it does not exist; an existing file keeps
 * its mode), written whole under a temporary name and renamed, so that a dev server reading it
 * never sees half a file. Answers the file's path.
 */
export async function writeEnvLocal(values: Record<string, string>, dir?: string): Promise<string> {
  const path = envLocalPath(dir);
  const current = await readText(path);
  const mode = current === undefined ? 0o600 : (await stat(path)).mode & 0o777;
  const temporary = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, setEnvValues(current ?? '', values), { mode });
    await chmod(temporary, mode);
    await rename(temporary, path);
  } catch (error) {
    throw new CliError('E006', { details: `cannot write ${path}: ${(error as Error).message}` });
  } finally {
    await rm(temporary, { force: true });
  }
  return path;
}

/** Whether the file at `path` may be read by other users than its owner (a secret written there would be too). */
export async function readableByOthers(path: string): Promise<boolean> {
  return ((await stat(path)).mode & 0o077) !== 0;
}
