import { RateLimiterMemory, RateLimiterPostgres } from 'rate-limiter-flexible';
import type { Sql } from 'postgres';
import type { LimiterFactory } from './rate-limit.ts';

/**
 * How long a counter update may wait (for a connection the pool is opening again, say) before the
 * insurance limiter answers instead: a database outage must not hold every request up here.
 */
const STORE_WAIT_MS = 1_000;

/** The `pool`-style client rate-limiter-flexible expects, over a postgres.js connection pool. */
function poolClient(sql: Sql) {
  return {
    async query(q: { text: string; values?: unknown[] }) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the rate-limit store did not answer within ${STORE_WAIT_MS} ms`)), STORE_WAIT_MS)));
      const query = sql.unsafe(q.text, (q.values ?? []) as never[], { prepare: true });
      query.catch(() => {});
      try {
        const rows = await Promise.race([query, late]);
        return { rows, rowCount: rows.count };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * Limiters whose counters live in PostgreSQL (table `rate_limits`, created by migration), so every
 * edge instance shares them. An in-memory insurance limiter takes over while the store is down.
 * A key that has spent its budget is also blocked in this process's memory until its window ends
 * (`inMemoryBlockOnConsumed` without a duration), so an over-limit client costs no store round
 * trip; the answers (429, remaining 0, the window's reset) stay those the store would give.
 */
export function postgresLimiters(sql: Sql, options: { keyPrefix?: string } = {}): LimiterFactory {
  return (group, policy) =>
    new RateLimiterPostgres({
      storeClient: poolClient(sql),
      storeType: 'pool',
      tableName: 'rate_limits',
      tableCreated: true,
      clearExpiredByTimeout: true,
      keyPrefix: `${options.keyPrefix ?? 'edge'}:${group}`,
      points: policy.points,
      duration: policy.durationSeconds,
      inMemoryBlockOnConsumed: policy.points,
      insuranceLimiter: new RateLimiterMemory({ points: policy.points, duration: policy.durationSeconds }),
    });
}
