import { execa } from 'execa';
import { readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../cli/bin/svc.js', import.meta.url));

export interface SvcRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (undefined when it is not JSON). */
  json: any;
}

/** At most `max` of the client's processes at once in this test file: each costs a Node start, and the machine is shared. */
function limiter(max: number) {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async <T>(work: () => Promise<T>): Promise<T> => {
    while (active >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await work();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}
const slot = limiter(6);

/**
 * Runs the real `svc` executable (the compiled client, which the run's global setup builds) in its
 * own process, stdin not a terminal, with only the environment given (plus PATH and TMPDIR): no CI,
 * NO_COLOR or token leaks in from the test run.
 */
export async function svc(args: string[], env: Record<string, string | undefined> = {}, input?: string, cwd?: string): Promise<SvcRun> {
  const result = await slot(() => execa('node', [BIN, ...args], {
    env: { PATH: process.env['PATH'], TMPDIR: process.env['TMPDIR'], ...env },
    extendEnv: false,
    ...(cwd ? { cwd } : {}),
    reject: false,
    stripFinalNewline: false,
    ...(input === undefined ? { stdin: 'ignore' as const } : { input }),
    // Generous: a start can take long on a loaded machine; a hang still ends the run.
    timeout: 90_000,
  }));
  let json: unknown;
  try {
    json = JSON.parse(result.stdout);
  } catch {
    json = undefined;
  }
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr, json };
}

/**
 * Starts the real `svc` executable and hands back the running process, for tests that watch its
 * output as it comes (a streamed answer) or give it a terminal; the same clean environment as `svc`.
 */
export function spawnSvc(args: string[], env: Record<string, string | undefined> = {}, cwd?: string) {
  return execa('node', [BIN, ...args], {
    env: { PATH: process.env['PATH'], TMPDIR: process.env['TMPDIR'], ...env },
    extendEnv: false,
    ...(cwd ? { cwd } : {}),
    reject: false,
    stripFinalNewline: false,
    stdin: 'ignore',
    timeout: 90_000,
  });
}

/** The path of the executable, for commands run under another program (`script`, for a terminal). */
export const SVC_BIN = BIN;

const VERSION: string = JSON.parse(readFileSync(new URL('../../cli/package.json', import.meta.url), 'utf8')).version;
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A path under the temporary directory through directories made by `mkdtemp` (`svc-home-Ab12Cd/`). */
const TEMPORARY = new RegExp(`(?:${[...new Set([tmpdir(), realpathSync(tmpdir())])].map(escape).join('|')})(?:/[^/\\s'"]*-[A-Za-z0-9]{6}(?![A-Za-z0-9]))+`, 'g');

/**
 * Replaces what changes from run to run so that text output can be compared: ids, timestamps,
 * the client's version, local ports, the run's database name and temporary directories; then each
 * `literals` key (a run's tag, say) by its placeholder.
 */
export function normalise(text: string, literals: Record<string, string> = {}): string {
  let out = text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})/g, '<time>')
    .replace(new RegExp(`(?<![\\w.])(v?)${escape(VERSION)}(?!\\w|\\.\\d)`, 'g'), '$1<version>')
    .replace(/\b(127\.0\.0\.1|localhost):\d+/g, '$1:<port>')
    .replace(/\bsvc_test_\d+_[0-9a-f]+\b/g, '<database>')
    .replace(TEMPORARY, '<tmp>');
  for (const [literal, placeholder] of Object.entries(literals)) out = out.replaceAll(literal, placeholder);
  return out;
}

/** A client process that keeps running (`svc dev`): its output so far, a wait for a line, and a stop. */
export interface RunningSvc {
  pid: number;
  /** stdout and stderr so far, interleaved as they came. */
  output(): string;
  /** Resolves when the output matches `pattern`; rejects when the process ends first or `timeoutMs` passes. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Sends `signal` and resolves to the exit code once the process has ended. */
  stop(signal?: NodeJS.Signals): Promise<number | undefined>;
  exited: Promise<number | undefined>;
}

/** Starts the real `svc` executable and leaves it running, with the same environment rules as {@link svc}. */
export function startSvc(args: string[], env: Record<string, string | undefined>, cwd: string): RunningSvc {
  const child = execa('node', [BIN, ...args], {
    env: { PATH: process.env['PATH'], TMPDIR: process.env['TMPDIR'], ...env },
    extendEnv: false,
    cwd,
    reject: false,
    stdin: 'ignore',
    all: true,
  });
  let output = '';
  child.all.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = child.then((result) => result.exitCode);
  return {
    pid: child.pid!,
    output: () => output,
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const started = Date.now();
        let done = false;
        void exited.then((code) => {
          if (!done && !pattern.test(output)) {
            done = true;
            reject(new Error(`svc ${args.join(' ')} exited (${code}) before printing ${pattern}:\n${output}`));
          }
        });
        const tick = () => {
          if (done) return;
          if (pattern.test(output)) {
            done = true;
            return resolve();
          }
          if (Date.now() - started > timeoutMs) {
            done = true;
            return reject(new Error(`svc ${args.join(' ')} did not print ${pattern} within ${timeoutMs} ms:\n${output}`));
          }
          setTimeout(tick, 100);
        };
        tick();
      });
    },
    async stop(signal = 'SIGTERM') {
      child.kill(signal);
      return exited;
    },
  };
}

/** A JWT whose `exp` has passed: the client refuses it before any call. */
export const expiredToken = () => {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub: 'someone', exp: Math.floor(Date.now() / 1000) - 3600 })}.signature`;
};
