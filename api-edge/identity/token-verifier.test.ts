import { describe, expect, it } from 'vitest';
import { withVerificationCache, type VerifiedIdentity } from './token-verifier.ts';

describe('withVerificationCache', () => {
  const identity = (exp: number): VerifiedIdentity => ({ sub: 'u1', token: 't', expiresAt: exp });

  it('verifies a token once while it is valid, again after it expires, and never caches failures', async () => {
    let clock = 1_000_000;
    let calls = 0;
    let fail = false;
    const cached = withVerificationCache(
      async () => {
        calls++;
        if (fail) throw new Error('bad');
        return identity(1_000 + 60);
      },
      { now: () => clock },
    );
    await cached('t');
    await cached('t');
    expect(calls).toBe(1);
    clock = 1_061_000;
    await cached('t');
    expect(calls).toBe(2);
    fail = true;
    await expect(cached('other')).rejects.toThrow('bad');
    await expect(cached('other')).rejects.toThrow('bad');
    expect(calls).toBe(4);
  });
});
