import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { CliError, invalidInput } from '../errors.ts';
import { findProjectRoot } from './project-root.ts';

/**
 * The one module that reads and changes env files (the project's `.env.local`, or the file
 * `svc.config.ts` names), for every command: `env`, `init`, `dev`, `doctor`, `deploy`, `vertical`,
 * `provision idp` and `workflow provision`. A file is changed line by line: comments, blank lines,
 * unrelated keys and their order stay as they are; a key that is set is changed where it stands (an
 * `export ` prefix kept, later assignments of it dropped), a new one is added at the end. Values
 * are read as dotenv reads them (`export ` prefix, single, double or backtick quotes, multi-line
 * quoted values, ` #` comments after an unquoted value), and written so that dotenv reads them back.
 *
 * A comment line `# svc:secret` right above an entry marks it as a secret: `env pull` writes it
 * above the secrets it fetches, `env list` masks such entries and `env push` stores them as secrets.
 *
 * The file is the project's: in the project folder ({@link findProjectRoot}), else in the current folder.
 */

export const ENV_FILE = '.env.local';
/** The comment that marks the entry below it as a secret. */
export const SECRET_MARKER = '# svc:secret';

export { IDP_ENV, VERTICAL_KEY_ENV } from './env.constants.ts';

interface EntryChunk {
  kind: 'entry';
  key: string;
  value: string;
  /** The chunk's lines as they are in the file (several for a multi-line quoted value). */
  raw: string;
}
interface OtherChunk {
  kind: 'other';
  raw: string;
}
type Chunk = EntryChunk | OtherChunk;

export interface EnvEntry {
  key: string;
  value: string;
  /** Marked `# svc:secret`, or a name or value that holds a secret (`looksSecret`). */
  secret: boolean;
}

export interface EnvFile {
  path: string;
  exists: boolean;
  chunks: Chunk[];
}

const ENTRY = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/;

/** The value of what follows `=` on an entry's first line (and the lines after it, for a quoted value that spans them); how many lines it took. */
function valueOf(rest: string, following: string[]): { value: string; lines: number } {
  const quote = rest[0];
  if (quote === '"' || quote === "'" || quote === '`') {
    let text = rest.slice(1);
    let lines = 1;
    for (;;) {
      const end = closingQuote(text, quote);
      if (end >= 0) {
        const inner = text.slice(0, end);
        return { value: quote === '"' ? inner.replace(/\\n/g, '\n').replace(/\\r/g, '\r') : inner, lines };
      }
      if (lines > following.length) break;
      text += '\n' + following[lines - 1];
      lines++;
    }
    // No closing quote: dotenv reads the first line as it stands.
    return { value: rest.trim(), lines: 1 };
  }
  const comment = rest.search(/\s#/);
  return { value: (comment >= 0 ? rest.slice(0, comment) : rest).trim(), lines: 1 };
}

function closingQuote(text: string, quote: string): number {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\' && quote === '"') i++;
    else if (text[i] === quote) return i;
  }
  return -1;
}

/** Splits the text into entries and everything else, keeping every character. */
export function parseEnv(text: string): Chunk[] {
  const lines = text.split('\n');
  const chunks: Chunk[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const match = ENTRY.exec(line);
    if (!match || line.trimStart().startsWith('#')) {
      chunks.push({ kind: 'other', raw: line });
      continue;
    }
    const { value, lines: taken } = valueOf(match[2]!.replace(/\r$/, ''), lines.slice(i + 1));
    chunks.push({ kind: 'entry', key: match[1]!, value, raw: lines.slice(i, i + taken).join('\n') });
    i += taken - 1;
  }
  return chunks;
}

const SECRET_WORDS = new Set(['SECRET', 'SECRETS', 'PASSWORD', 'PASSWD', 'PWD', 'TOKEN', 'TOKENS', 'CREDENTIAL', 'CREDENTIALS', 'PRIVATE', 'APIKEY']);
const SECRET_PAIRS = ['API_KEY', 'ACCESS_KEY', 'SECRET_KEY', 'SIGNING_KEY', 'ENCRYPTION_KEY', 'AUTH_KEY', 'MASTER_KEY'];
/** A URL with a password in it: `postgres://user:password@host/db`. */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i;

/**
 * Whether an entry holds a secret by its name (a word such as SECRET, PASSWORD, TOKEN, PRIVATE or
 * CREDENTIALS, or API_KEY, ACCESS_KEY, SECRET_KEY and the like; not a bare KEY such as
 * SVC_VERTICAL_KEY) or by its value (a URL with a password).
 */
export function looksSecret(key: string, value: string): boolean {
  const name = key.toUpperCase();
  if (name.split(/[_.-]/).some((word) => SECRET_WORDS.has(word))) return true;
  if (SECRET_PAIRS.some((pair) => name === pair || name.endsWith(`_${pair}`) || name.includes(`_${pair}_`) || name.startsWith(`${pair}_`))) return true;
  return URL_WITH_PASSWORD.test(value);
}

/**
 * How a value is written: bare when it can be; else in single quotes (taken literally), double
 * quotes (a line break written `\n`) or backticks, whichever the value allows. dotenv has no escapes
 * for quotes, so a value that no quoting can carry is refused (E305).
 */
export function formatValue(value: string, key = 'the value'): string {
  if (/^[^\s'"`#\\]*$/.test(value)) return value;
  if (/[\n\r]/.test(value)) {
    if (!value.includes('"') && !value.includes('\\')) return `"${value.replace(/\n/g, '\\n').replace(/\r/g, '\\r')}"`;
  } else {
    if (!value.includes("'")) return `'${value}'`;
    if (!value.includes('"') && !value.includes('\\')) return `"${value}"`;
    if (!value.includes('`')) return `\`${value}\``;
  }
  throw invalidInput(`${key} cannot be written to ${ENV_FILE}: its value mixes quotes and line breaks that dotenv cannot read back`);
}

const isMarker = (chunk: Chunk | undefined) => chunk?.kind === 'other' && chunk.raw.trim() === SECRET_MARKER;

/** Reads the file; one that does not exist is empty. */
export async function readEnvFile(path: string): Promise<EnvFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { path, exists: false, chunks: [] };
    throw new CliError('E006', { details: `${path}: ${(error as Error).message}` });
  }
  return { path, exists: true, chunks: parseEnv(text) };
}

/** Index of the entry of `key` that counts: the last, as dotenv reads a key given twice. */
function entryIndex(chunks: Chunk[], key: string): number {
  for (let i = chunks.length - 1; i >= 0; i--) if (chunks[i]!.kind === 'entry' && (chunks[i] as EntryChunk).key === key) return i;
  return -1;
}

/** The file's entries, each key once (its last value, as dotenv reads it), in the order of first appearance. */
export function entriesOf(file: EnvFile): EnvEntry[] {
  const keys = [...new Set(file.chunks.flatMap((c) => (c.kind === 'entry' ? [c.key] : [])))];
  return keys.map((key) => {
    const at = entryIndex(file.chunks, key);
    const chunk = file.chunks[at] as EntryChunk;
    return { key, value: chunk.value, secret: isMarker(file.chunks[at - 1]) || looksSecret(key, chunk.value) };
  });
}

export type EnvChange = { key: string; action: 'added' | 'updated' | 'unchanged'; secret: boolean };

export interface EnvUpdate {
  key: string;
  value: string;
  /** Marks (true) or unmarks (false) the entry as a secret; undefined leaves its marker as it is. */
  secret?: boolean;
  /** A comment line written above the entry when it is added. */
  comment?: string;
}

export interface EnvUpdateOptions {
  /** Keep every key that already has a non-empty value (`init`, `doctor --fix` fill in only what is missing). */
  onlyMissing?: boolean;
  /** Comment lines that open a file made now. */
  header?: string[];
}

const EXPORT_PREFIX = /^\s*export\s+/;

/**
 * `chunks` with `updates` set: each key's first entry is rewritten where it stands when its value
 * differs (an `export ` prefix kept) and its later entries are dropped, so that one value is left;
 * the `# svc:secret` marker above it follows `secret`; new keys are added at the end.
 */
export function applyEnvUpdates(chunks: readonly Chunk[], updates: readonly EnvUpdate[], options: EnvUpdateOptions = {}): { chunks: Chunk[]; changes: EnvChange[] } {
  let out = [...chunks];
  const changes: EnvChange[] = [];
  const appended: Chunk[] = [];
  for (const update of updates) {
    const positions = out.flatMap((c, i) => (c.kind === 'entry' && c.key === update.key ? [i] : []));
    if (positions.length === 0) {
      if (update.comment) appended.push({ kind: 'other', raw: `# ${update.comment}` });
      if (update.secret) appended.push({ kind: 'other', raw: SECRET_MARKER });
      appended.push({ kind: 'entry', key: update.key, value: update.value, raw: `${update.key}=${formatValue(update.value, update.key)}` });
      changes.push({ key: update.key, action: 'added', secret: update.secret === true });
      continue;
    }
    const current = (out[positions[positions.length - 1]!] as EntryChunk).value;
    const keep = options.onlyMissing && current !== '';
    const value = keep ? current : update.value;
    const first = out[positions[0]!] as EntryChunk;
    const duplicates = new Set(positions.slice(1).flatMap((i) => (isMarker(out[i - 1]) ? [i - 1, i] : [i])));
    const changed = value !== first.value || duplicates.size > 0;
    if (changed) out[positions[0]!] = { kind: 'entry', key: update.key, value, raw: `${EXPORT_PREFIX.exec(first.raw)?.[0] ?? ''}${update.key}=${formatValue(value, update.key)}` };
    out = out.filter((_, i) => !duplicates.has(i));
    const at = out.indexOf(out.find((c) => c.kind === 'entry' && c.key === update.key)!);
    const marked = isMarker(out[at - 1]);
    const secret = keep ? marked : (update.secret ?? marked);
    if (secret && !marked) out.splice(at, 0, { kind: 'other', raw: SECRET_MARKER });
    if (!secret && marked) out.splice(at - 1, 1);
    changes.push({ key: update.key, action: changed || secret !== marked ? 'updated' : 'unchanged', secret });
  }
  if (appended.length) {
    // Keep one final newline: drop the empty last "line" a trailing newline leaves, then add it back.
    while (out.length && out[out.length - 1]!.kind === 'other' && out[out.length - 1]!.raw === '') out.pop();
    out.push(...appended, { kind: 'other', raw: '' });
  }
  return { chunks: out, changes };
}

/** A dotenv text with `values` set (see {@link applyEnvUpdates}). */
export function setEnvValues(text: string, values: Record<string, string>): string {
  const { chunks } = applyEnvUpdates(text === '' ? [] : parseEnv(text), Object.entries(values).map(([key, value]) => ({ key, value })));
  const out = chunks.map((c) => c.raw).join('\n');
  return out.endsWith('\n') || out === '' ? out : out + '\n';
}

/**
 * Sets `updates` in the env file at `path` (see {@link applyEnvUpdates}); a missing file is made
 * (mode 0600, as it may hold secrets, opening with `options.header`), and an existing one keeps its
 * mode. Written under a temporary name, then renamed, so that a dev server never reads half a file;
 * nothing is written when nothing changes.
 */
export async function updateEnvFile(path: string, updates: readonly EnvUpdate[], options: EnvUpdateOptions = {}): Promise<EnvChange[]> {
  const file = await readEnvFile(path);
  const opening: Chunk[] = !file.exists && options.header ? options.header.map((line) => ({ kind: 'other', raw: `# ${line}` })) : [];
  const { chunks, changes } = applyEnvUpdates([...opening, ...file.chunks], updates, options);
  if (changes.every((c) => c.action === 'unchanged') && (file.exists || changes.length === 0)) return changes;
  const text = chunks.map((c) => c.raw).join('\n');
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  const mode = file.exists ? (await stat(path)).mode & 0o777 : 0o600;
  try {
    await writeFile(temporary, text.endsWith('\n') || text === '' ? text : text + '\n', { mode });
    await rename(temporary, path);
  } catch (error) {
    throw new CliError('E006', { details: `cannot write ${path}: ${(error as Error).message}` });
  } finally {
    await rm(temporary, { force: true });
  }
  return changes;
}

/** The values of the env file at `path`, each key once (its last value, as dotenv reads it); undefined when the file does not exist. */
export async function readEnvValues(path: string): Promise<Record<string, string> | undefined> {
  const file = await readEnvFile(path);
  return file.exists ? Object.fromEntries(entriesOf(file).map((e) => [e.key, e.value])) : undefined;
}

/** Whether the file at `path` may be read by other users than its owner (a secret written there would be too). */
export async function readableByOthers(path: string): Promise<boolean> {
  return ((await stat(path)).mode & 0o077) !== 0;
}

/** Where the project's `.env.local` is: in the project folder, else in the current folder. */
export async function envFilePath(cwd = process.cwd()): Promise<string> {
  return join((await findProjectRoot(cwd)) ?? resolve(cwd), ENV_FILE);
}

/** Sets `values` in the project's `.env.local` (see {@link updateEnvFile}); answers the file's path. */
export async function writeProjectEnv(values: Record<string, string>, cwd = process.cwd()): Promise<string> {
  const path = await envFilePath(cwd);
  await updateEnvFile(path, Object.entries(values).map(([key, value]) => ({ key, value })));
  return path;
}

/** The project's app name: the `name` of its `package.json`, without an npm scope (`@acme/shop` is `shop`). */
export async function projectAppName(cwd = process.cwd()): Promise<string | undefined> {
  const root = await findProjectRoot(cwd);
  if (!root) return undefined;
  try {
    const name = (JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { name?: unknown }).name;
    return typeof name === 'string' && name ? name.replace(/^@[^/]+\//, '') : undefined;
  } catch {
    return undefined;
  }
}

/** `--label`, else the project's app name; E001 outside a project, E303 when the project has no name. */
export async function resolveLabel(label: string | undefined, cwd = process.cwd()): Promise<string> {
  if (label) return label;
  if (!(await findProjectRoot(cwd))) throw new CliError('E001');
  const name = await projectAppName(cwd);
  if (!name) throw new CliError('E303', { field: '--label (package.json has no name)' });
  return name;
}
