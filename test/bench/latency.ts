/** Throughput and latency of one measured run. */
export interface Measurement {
  /** Requests (wrk) or transactions (pgbench) per second. */
  rate: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses other than 2xx/3xx, socket errors, failed or aborted transactions. */
  errors: number;
}

/** The `q` quantile (0..1) of `values` by nearest rank; sorts `values` in place. */
export function quantile(values: Float64Array, q: number): number {
  if (values.length === 0) return Number.NaN;
  values.sort();
  return values[Math.min(values.length - 1, Math.max(0, Math.ceil(q * values.length) - 1))]!;
}
