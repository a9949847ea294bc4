import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TourBlock } from './markdown-tour.ts';

/** The origin the guides write; a run replaces it with the platform's. */
export const DOCUMENTED_ORIGIN = 'http://localhost:8080';

/**
 * Run before each block: the variables of the blocks before it (`set -a` exports every assignment),
 * and `curl` recording each answer's status, arguments and body (in the order of the calls) while
 * passing the body on as curl would.
 */
const PRELUDE = String.raw`
set -a
[ -f "$TOUR_STATE" ] && . "$TOUR_STATE"
set -eo pipefail
curl() {
  local call status
  call="$TOUR_CALLS/$(date +%s%N)"
  printf '%s' "$*" > "$call.args"
  status=$(command curl -sS -o "$call.body" -w '%{http_code}' "$@") || { echo "curl failed: $*" >&2; return 1; }
  printf '%s' "$status" > "$call.status"
  cat "$call.body"
}
`;

/** The block's code, its variables (but the runner's own) kept for the next block. */
const scriptOf = (block: TourBlock, origin: string) =>
  `${PRELUDE}\n${block.code.replaceAll(DOCUMENTED_ORIGIN, origin)}\nexport -p | grep -v '^declare -x TOUR_' > "$TOUR_STATE"\n`;

export interface Call {
  args: string;
  status: number;
  body: string;
}

export interface BlockRun {
  code: number | null;
  output: string;
  calls: Call[];
}

export interface TourSession {
  /** Where the platform answers, in place of {@link DOCUMENTED_ORIGIN}. */
  origin: string;
  /** A folder of the session's own: its shell state, scripts and recorded calls. */
  work: string;
  /** Added to the shell's environment (PATH, HOME, SVC_URL...). */
  env: Record<string, string | undefined>;
}

/** Runs one block in bash, after the blocks run before it in `session`: its exit code, output and the answers of its curl calls. */
export async function runBlock(block: TourBlock, index: number, session: TourSession): Promise<BlockRun> {
  const calls = join(session.work, `calls-${index}`);
  mkdirSync(calls, { recursive: true });
  const script = join(session.work, `block-${index}.sh`);
  writeFileSync(script, scriptOf(block, session.origin));
  const child = spawn('bash', [script], {
    env: { ...session.env, TOUR_STATE: join(session.work, 'state.sh'), TOUR_CALLS: calls },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const [code] = await once(child, 'exit');
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  };
  const recorded = readdirSync(calls).filter((name) => name.endsWith('.args')).sort();
  return {
    code: code as number | null,
    output,
    calls: recorded.map((name) => {
      const base = join(calls, name.slice(0, -'.args'.length));
      return { args: read(`${base}.args`), status: Number(read(`${base}.status`)), body: read(`${base}.body`) };
    }),
  };
}

/** What is wrong with a block's run, naming the block's line in its guide; undefined when it did what its comment says. */
export function disagreement(block: TourBlock, run: BlockRun): string | undefined {
  const expected = block.expect?.run ? block.expect.statuses : [];
  const prints = block.expect?.run ? block.expect.prints : undefined;
  const answered = run.calls.map((call) => call.status);
  const printedAll = prints === undefined || run.output.includes(prints);
  if (run.code === 0 && answered.join(' ') === expected.join(' ') && printedAll) return undefined;
  if (run.code === 0 && !printedAll) return `${block.file}:${block.line}: the block ran, but its output lacks ${JSON.stringify(prints)}\n--- its output ---\n${run.output.slice(-2000)}`;
  const wrong = run.calls.findIndex((call, i) => call.status !== expected[i]);
  const detail =
    wrong >= 0
      ? `curl #${wrong + 1} (${run.calls[wrong]!.args}) answered ${run.calls[wrong]!.status}, expected ${expected[wrong] ?? 'no call'}: ${run.calls[wrong]!.body.slice(0, 600)}`
      : `answered ${answered.join(' ') || 'nothing'}, expected ${expected.join(' ') || 'no curl call'}`;
  return `${block.file}:${block.line}: the block ${run.code === 0 ? 'ran' : `failed (exit code ${run.code})`}; ${detail}\n--- its output ---\n${run.output.slice(-2000)}`;
}
