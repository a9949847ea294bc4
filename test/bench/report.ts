import type { CpuSplit } from './cpu.ts';
import type { Measurement } from './latency.ts';

export interface Row {
  workload: string;
  tool: string;
  connections: number;
  result: Measurement & { cpu?: CpuSplit };
}

export interface Ratio {
  label: string;
  numerator: Row;
  denominator: Row;
  /** Minimum acceptable ratio; none for ratios that are only reported. */
  target?: number;
}

/** Columns padded to width: the first `leftAligned` to the left, the rest to the right, under a rule. */
export function table(header: string[], rows: string[][], leftAligned = 1): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < leftAligned ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

function cpuCell(cpu: CpuSplit | undefined): string {
  return cpu ? `${cpu.platform}/${cpu.postgres}/${cpu.loadGenerator}/${cpu.other}` : '-';
}

/** The results table: one line per measured workload. */
export function resultsTable(rows: Row[]): string {
  return table(
    ['workload', 'load generator', 'conns', 'req|tx/s', 'p50 ms', 'p99 ms', 'errors', 'cpu% platform/pg/gen/other'],
    rows.map(({ workload, tool, connections, result }) => [
      workload,
      tool,
      String(connections),
      fixed(result.rate, result.rate < 100 ? 1 : 0),
      fixed(result.p50Ms, 2),
      fixed(result.p99Ms, 2),
      String(result.errors),
      cpuCell(result.cpu),
    ]),
    2,
  );
}

/** The ratios of throughput, with PASS or MISS where a target is set. */
export function ratiosTable(ratios: Ratio[]): string {
  return table(
    ['throughput ratio', 'value', 'target', 'verdict'],
    ratios.map(({ label, numerator, denominator, target }) => {
      const value = numerator.result.rate / denominator.result.rate;
      const verdict = target === undefined ? 'info' : value >= target ? 'PASS' : 'MISS';
      return [label, fixed(value, 3), target === undefined ? '-' : `>= ${target.toFixed(2)}`, verdict];
    }),
  );
}
