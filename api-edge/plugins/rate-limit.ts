import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimitError, rateLimitRefusals } from '../../control-plane/contracts.ts';

/** A request budget per key (tenant, or client address before sign-in) and window. */
export interface RateLimitPolicy {
  points: number;
  durationSeconds: number;
}

export type RateLimitGroup = 'resources' | 'users' | 'uploads' | 'anonymous' | 'webhooks';

export interface RateLimitHeaders {
  'x-ratelimit-limit': string;
  'x-ratelimit-remaining': string;
  'x-ratelimit-reset': string;
}

/** Builds a limiter for a group; the composition root backs it with the shared store (PostgreSQL). */
export type LimiterFactory = (group: RateLimitGroup, policy: RateLimitPolicy) => RateLimiterAbstract;

export const DEFAULT_POLICIES: Record<RateLimitGroup, RateLimitPolicy> = {
  resources: { points: 1000, durationSeconds: 60 },
  users: { points: 1000, durationSeconds: 60 },
  /** Seed 000: "Documents API uploads: 50 per minute per tenant". */
  uploads: { points: 50, durationSeconds: 60 },
  anonymous: { points: 300, durationSeconds: 60 },
  /** Inbound webhook deliveries, per endpoint (whatever the spelling of its path). */
  webhooks: { points: 1000, durationSeconds: 60 },
};

function headersFor(policy: RateLimitPolicy, res: RateLimiterRes): RateLimitHeaders {
  return {
    'x-ratelimit-limit': String(policy.points),
    'x-ratelimit-remaining': String(Math.max(0, res.remainingPoints)),
    'x-ratelimit-reset': String(Math.ceil((Date.now() + Math.max(0, res.msBeforeNext)) / 1000)),
  };
}

/**
 * Consumes one point for `key` in `group`. Resolves with the headers to send; rejects with a
 * RateLimitError (carrying the headers) when the budget is spent. When the shared store fails,
 * the library's in-memory insurance limiter keeps counting for this process.
 */
export function createRateLimits(factory: LimiterFactory, policies: Record<RateLimitGroup, RateLimitPolicy> = DEFAULT_POLICIES) {
  const limiters = Object.fromEntries(
    (Object.keys(policies) as RateLimitGroup[]).map((group) => [group, factory(group, policies[group])]),
  ) as Record<RateLimitGroup, RateLimiterAbstract>;

  return async function consume(group: RateLimitGroup, key: string): Promise<RateLimitHeaders> {
    const policy = policies[group];
    try {
      return headersFor(policy, await limiters[group].consume(key));
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) throw outcome;
      rateLimitRefusals.inc({ group });
      const error = new RateLimitError(Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)));
      throw Object.assign(error, { headers: headersFor(policy, outcome) });
    }
  };
}

export type ConsumeRateLimit = ReturnType<typeof createRateLimits>;
