import { randomBytes } from 'node:crypto';
import { access, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { CliError } from '../errors.ts';

/**
 * A project's `.env.local`, read and changed line by line: comments, blank lines, unrelated keys
 * and their order stay as they are; a key that is set is changed where it stands, a new one is
 * added at the end. Values are read as dotenv reads them (`export ` prefix, single, double or
 * backtick quotes, multi-line quoted values, ` #` comments after an unquoted value).
 *
 * A comment line `# svc:secret` right above an entry marks it as a secret: `env pull` writes it
 * above the secrets it fetches, `env list` masks such entries and `env push` stores them as secrets.
 */

export const ENV_FILE = '.env.local';
/** The comment that marks the entry below it as a secret. */
export const SECRET_MARKER = '# svc:secret';

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

/** How a value is written: bare when it can be, else in the quotes that keep it exactly. */
export function formatValue(value: string): string {
  if (/^[^\s'"`#\\]*$/.test(value)) return value;
  if (!value.includes("'") && !/[\n\r]/.test(value)) return `'${value}'`;
  if (!value.includes('`')) return `\`${value}\``;
  return `"${value.replace(/\n/g, '\\n').replace(/\r/g, '\\r')}"`;
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

/**
 * Sets `updates` in the file (created when missing, mode 0600 as it may hold secrets): each key's
 * entry (its last, if given twice) is rewritten where it stands when its value differs, and the `# svc:secret` marker
 * above it follows `secret` (left as it is when `secret` is undefined); new keys are added at the
 * end. Written under a temporary name, then renamed.
 */
export async function updateEnvFile(path: string, updates: Array<{ key: string; value: string; secret?: boolean }>): Promise<EnvChange[]> {
  const file = await readEnvFile(path);
  const chunks = [...file.chunks];
  const changes: EnvChange[] = [];
  const appended: Chunk[] = [];
  for (const update of updates) {
    const line = `${update.key}=${formatValue(update.value)}`;
    const at = entryIndex(chunks, update.key);
    if (at < 0) {
      if (update.secret) appended.push({ kind: 'other', raw: SECRET_MARKER });
      appended.push({ kind: 'entry', key: update.key, value: update.value, raw: line });
      changes.push({ key: update.key, action: 'added', secret: update.secret === true });
      continue;
    }
    const existing = chunks[at] as EntryChunk;
    const marked = isMarker(chunks[at - 1]);
    const secret = update.secret ?? marked;
    const changed = existing.value !== update.value;
    if (changed) chunks[at] = { kind: 'entry', key: update.key, value: update.value, raw: line };
    if (update.secret === true && !marked) chunks.splice(at, 0, { kind: 'other', raw: SECRET_MARKER });
    if (update.secret === false && marked) chunks.splice(at - 1, 1);
    changes.push({ key: update.key, action: changed || secret !== marked ? 'updated' : 'unchanged', secret });
  }
  if (appended.length) {
    // Keep one final newline: drop the empty last "line" a trailing newline leaves, then add it back.
    while (chunks.length && chunks[chunks.length - 1]!.kind === 'other' && chunks[chunks.length - 1]!.raw === '') chunks.pop();
    chunks.push(...appended, { kind: 'other', raw: '' });
  }
  if (changes.every((c) => c.action === 'unchanged') && (file.exists || changes.length === 0)) return changes;
  const text = chunks.map((c) => c.raw).join('\n');
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  const mode = file.exists ? (await stat(path)).mode & 0o777 : 0o600;
  try {
    await writeFile(temporary, text.endsWith('\n') || text === '' ? text : text + '\n', { mode });
    await rename(temporary, path);
  } finally {
    await rm(temporary, { force: true });
  }
  return changes;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/**
 * The project the current directory belongs to: the nearest directory at or above it that holds
 * `svc.config.ts`, else the nearest that holds `package.json`; undefined outside any project.
 */
export async function findProjectRoot(cwd = process.cwd()): Promise<string | undefined> {
  for (const marker of ['svc.config.ts', 'package.json']) {
    for (let dir = resolve(cwd); ; dir = dirname(dir)) {
      if (await exists(join(dir, marker))) return dir;
      if (dirname(dir) === dir) break;
    }
  }
  return undefined;
}

/** Where `.env.local` is: in the project's root, else in the current directory. */
export async function envFilePath(cwd = process.cwd()): Promise<string> {
  return join((await findProjectRoot(cwd)) ?? resolve(cwd), ENV_FILE);
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
