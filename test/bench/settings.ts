/** The load every edge benchmark runs: BENCH_SECONDS (15), BENCH_WARMUP_SECONDS (5), BENCH_CONNECTIONS (32), BENCH_THREADS (2), BENCH_ROWS (100000). */
export interface Settings {
  seconds: number;
  warmupSeconds: number;
  connections: number;
  threads: number;
  rows: number;
}

function numberFromEnv(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
}

export function readSettings(): Settings {
  const seconds = numberFromEnv('BENCH_SECONDS', 15);
  return {
    seconds,
    warmupSeconds: numberFromEnv('BENCH_WARMUP_SECONDS', Math.min(5, seconds)),
    connections: numberFromEnv('BENCH_CONNECTIONS', 32),
    threads: numberFromEnv('BENCH_THREADS', 2),
    rows: numberFromEnv('BENCH_ROWS', 100_000),
  };
}

/** Runs a benchmark's `main` and exits: 0 when it measured (whatever the verdicts), 1 when it failed. */
export async function runBenchmark(main: () => Promise<void>): Promise<never> {
  try {
    await main();
    process.exit(0);
  } catch (error) {
    console.error(error);
    process.exit(1);
  }
}
