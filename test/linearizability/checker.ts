import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir } from '../../control-plane/app/state-dir.ts';
import { elapsed, isExecutable, runGo } from '../../scripts/stack/go-build.ts';
import { withLock } from '../../scripts/stack/process.ts';

/**
 * The linearizability checker (test/linearizability/checker/, a Go module on porcupine) and the
 * history format it reads: JSON lines, first `{initial: {id: {version, data}}}`, then one operation
 * per line. Each resource's data is one string (the test writes a unique tag per write).
 */

/** Replace `id`'s data at `version` (absent: at any version, as `If-Match: *` does). */
export interface HistoryItem {
  id: string;
  version?: number;
  data: string;
}

export type HistoryInput = { op: 'read'; id: string } | ({ op: 'write' } & HistoryItem) | { op: 'batch'; items: HistoryItem[] };

/**
 * What the client saw. `unknown`: no answer it can trust (a timeout, a 5xx, a reset connection), so
 * the operation may or may not have taken effect, at any time after its call.
 */
export type HistoryOutput =
  | { status: 'ok'; version: number; data: string } // a read
  | { status: 'ok'; versions: number[] } // a write or batch: the new versions, item by item
  | { status: 'conflict' }
  | { status: 'unknown' };

export interface HistoryOperation {
  client: number;
  /** Microseconds on one monotonic clock. */
  call: number;
  return: number;
  input: HistoryInput;
  output: HistoryOutput;
}

export interface History {
  initial: Record<string, { version: number; data: string }>;
  operations: HistoryOperation[];
}

export interface CheckResult {
  /** `linearizable`, `violation` (stderr explains it), or `undecided` within the timeout. */
  verdict: 'linearizable' | 'violation' | 'undecided';
  message: string;
}

const MODULE_DIR = fileURLToPath(new URL('./checker/', import.meta.url));
const SOURCES = ['go.mod', 'go.sum', 'main.go'];
const BUILD_LOCK_TIMEOUT_MS = 10 * 60_000;

/**
 * The checker binary, built once per source (go.mod, go.sum, main.go) into the shared cache as the
 * stack's other Go binaries are; builds are serialized across processes by a lock file.
 */
export async function ensureLinearizabilityChecker(opts: { log?: (message: string) => void } = {}): Promise<string> {
  const hash = createHash('sha256');
  for (const file of SOURCES) hash.update(`${file}\0`).update(readFileSync(join(MODULE_DIR, file)));
  const dir = cacheDir(`linearizability-checker-${hash.digest('hex').slice(0, 16)}`);
  const binary = join(dir, 'linearizability-checker');
  if (isExecutable(binary)) return binary;
  await withLock(join(dir, '.build.lock'), async () => {
    if (isExecutable(binary)) return;
    const started = Date.now();
    const building = join(dir, `.build-${process.pid}`);
    try {
      await runGo({
        args: ['build', '-v', '-o', building, '.'],
        cwd: MODULE_DIR,
        label: 'the linearizability checker',
        log: opts.log,
        typical: 'under a minute',
        missingGoHint: 'install Go to check histories for linearizability.',
      });
      renameSync(building, binary);
    } finally {
      rmSync(building, { force: true });
    }
    opts.log?.(`built the linearizability checker in ${elapsed(started)}: ${binary}`);
  }, { timeoutMs: BUILD_LOCK_TIMEOUT_MS, log: opts.log });
  return binary;
}

/** Writes `history` to `file` as the checker reads it. */
export function writeHistory(file: string, history: History): void {
  const lines = [JSON.stringify({ initial: history.initial }), ...history.operations.map((op) => JSON.stringify(op))];
  writeFileSync(file, lines.join('\n') + '\n');
}

/** Runs the checker on a history file; with `visualize`, a violation also writes porcupine's HTML view there. */
export async function checkHistory(file: string, opts: { visualize?: string; timeoutSeconds?: number; log?: (message: string) => void } = {}): Promise<CheckResult> {
  const checker = await ensureLinearizabilityChecker({ log: opts.log });
  const args = [...(opts.visualize ? ['-visualize', opts.visualize] : []), '-timeout', `${opts.timeoutSeconds ?? 60}s`, file];
  return new Promise((resolve, reject) => {
    execFile(checker, args, { encoding: 'utf8', maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      const message = (stdout + stderr).trim();
      const code = error ? (error as { code?: unknown }).code : 0;
      if (code === 0) resolve({ verdict: 'linearizable', message });
      else if (code === 1) resolve({ verdict: 'violation', message });
      else if (code === 3) resolve({ verdict: 'undecided', message });
      else reject(new Error(`the linearizability checker failed on ${file} (${String(code)}): ${message}`));
    });
  });
}
