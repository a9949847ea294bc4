/**
 * `npm run bench:cli`: how long the `svc` client takes to start, against Node starting and doing
 * nothing (`node -e 0`), in the same run.
 *
 * Builds the client first (cli/dist/, as the tests and the package use it), then runs, one process
 * at a time and alternating, `node -e 0` then `node cli/bin/svc.js --version`, `node -e 0` then
 * `node cli/bin/svc.js --help`, after warm-up rounds. Each run of the client is paired with the
 * baseline run just before it, so the ratio of a pair holds when the machine's speed drifts (the
 * machine is shared); the ratios' median is the figure to quote. Wall time is measured around the
 * process from spawn to exit; CPU time (user + system) from the kernel's account of the reaped
 * child (`/proc/self/stat`'s cutime and cstime, in clock ticks, so coarse for one run: read its median).
 * Both run with a minimal environment (PATH and HOME): variables such as NODE_OPTIONS or
 * NODE_EXTRA_CA_CERTS make every Node start slower and would hide the client's own cost.
 * Target: each ratio of wall times at most 3.
 *
 * Settings: BENCH_CLI_RUNS (30 pairs per command), BENCH_CLI_WARMUP (3 rounds).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildClient } from '../../cli/scripts/build.ts';
import { CLK_TCK } from './process-cpu.ts';
import { table } from './report.ts';
import { runBenchmark } from './settings.ts';

const BIN = fileURLToPath(new URL('../../cli/bin/svc.js', import.meta.url));
const TARGET = 3;

interface Sample {
  wallMs: number;
  cpuMs: number;
}

function setting(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number`);
  return value;
}

/** CPU time of this process's reaped children so far, in milliseconds. */
function childrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state is field 3; cutime and cstime are fields 16 and 17.
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLK_TCK;
}

/** Runs `node ...args` to its end with no output kept; fails when it exits non-zero. */
function timed(args: string[]): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const cpuBefore = childrenCpuMs();
    const started = performance.now();
    const child = spawn(process.execPath, args, { stdio: 'ignore', env: { PATH: process.env.PATH, HOME: process.env.HOME } });
    child.once('error', reject);
    child.once('exit', (code) => {
      const wallMs = performance.now() - started;
      if (code !== 0) return reject(new Error(`node ${args.join(' ')} exited with ${code}`));
      // The child is reaped once 'exit' is emitted, so its CPU time is in the account.
      resolve({ wallMs, cpuMs: childrenCpuMs() - cpuBefore });
    });
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const spread = (values: number[], digits: number) =>
  [Math.min(...values), median(values), Math.max(...values)].map((v) => (Number.isFinite(v) ? v.toFixed(digits) : '-'));

async function main(): Promise<void> {
  const runs = setting('BENCH_CLI_RUNS', 30);
  const warmup = setting('BENCH_CLI_WARMUP', 3);
  const built = await buildClient();
  const entry = built.files.find((f) => f.file === 'svc.mjs');
  process.stderr.write(`built the client: svc.mjs ${((entry?.bytes ?? 0) / 1024).toFixed(0)} KiB, ${built.files.length} files in dist/\n`);

  const commands = { version: [BIN, '--version'], help: [BIN, '--help'] } as const;
  const baseline = ['-e', '0'];
  const samples = { version: { svc: [] as Sample[], node: [] as Sample[] }, help: { svc: [] as Sample[], node: [] as Sample[] } };
  for (let round = 0; round < warmup + runs; round++) {
    for (const name of ['version', 'help'] as const) {
      const node = await timed(baseline);
      const svc = await timed([...commands[name]]);
      if (round < warmup) continue;
      samples[name].node.push(node);
      samples[name].svc.push(svc);
    }
  }

  const rows: string[][] = [];
  const ratios: string[][] = [];
  for (const name of ['version', 'help'] as const) {
    const { svc, node } = samples[name];
    rows.push([`svc --${name}`, ...spread(svc.map((s) => s.wallMs), 1), ...spread(svc.map((s) => s.cpuMs), 0)]);
    rows.push([`node -e 0 (paired)`, ...spread(node.map((s) => s.wallMs), 1), ...spread(node.map((s) => s.cpuMs), 0)]);
    const wall = svc.map((s, i) => s.wallMs / node[i]!.wallMs);
    const cpu = svc.filter((_, i) => node[i]!.cpuMs > 0).map((s, i) => s.cpuMs / node.filter((n) => n.cpuMs > 0)[i]!.cpuMs);
    const verdict = median(wall) <= TARGET ? 'PASS' : 'MISS';
    ratios.push([`svc --${name} / node -e 0`, ...spread(wall, 2), cpu.length ? median(cpu).toFixed(2) : '-', `<= ${TARGET.toFixed(2)}`, verdict]);
  }
  console.log(`svc start-up against node -e 0: ${runs} pairs per command after ${warmup} warm-up rounds, Node ${process.version}\n`);
  console.log(table(['command', 'wall min ms', 'median', 'max', 'cpu min ms', 'median', 'max'], rows));
  console.log('');
  console.log(table(['ratio (pair by pair)', 'wall min', 'median', 'max', 'cpu median', 'target', 'verdict'], ratios));
}

await runBenchmark(main);
