import { describe, expect, it } from 'vitest';
import { ServiceUnavailableError } from '../errors.ts';
import { toAppErrorBody } from '../trpc/error-map.ts';
import { isConnectionLost, isDatabaseUnavailable, reconnectBackoff, withinAcquireTimeout } from './faults.ts';

const failure = (code: string) => Object.assign(new Error(code), { code });

describe('database faults', () => {
  it('tells a lost or refused connection, a server shutting down or starting, and a cancelled statement from other failures', () => {
    for (const code of ['ECONNREFUSED', 'CONNECTION_CLOSED', 'CONNECT_TIMEOUT', '57P01', '57P03', '08006', '53300']) expect(isConnectionLost(failure(code)), code).toBe(true);
    expect(isDatabaseUnavailable(failure('57014'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('wrapped', { cause: failure('ECONNRESET') }))).toBe(true);
    for (const code of ['23505', '22P02', '55P03', '40001']) expect(isDatabaseUnavailable(failure(code)), code).toBe(false);
  });

  it('answers them 503 SERVICE_UNAVAILABLE with retryAfter, and keeps other failures internal', () => {
    expect(toAppErrorBody(failure('ECONNREFUSED'))).toEqual({ code: 'SERVICE_UNAVAILABLE', message: expect.any(String), retryAfter: 1 });
    expect(toAppErrorBody(failure('23505'))).toEqual({ code: 'INTERNAL_ERROR', message: 'internal error' });
  });

  it('reconnects within a second, however many attempts failed', () => {
    expect(reconnectBackoff(0)).toBeLessThan(0.1);
    expect(reconnectBackoff(50)).toBe(1);
  });

  it('refuses a wait for a connection past its bound, and gives a late connection back unused', async () => {
    let release: (value: string) => void = () => {};
    let ran = false;
    const late = withinAcquireTimeout(50, async (claim) => {
      const connection = await new Promise<string>((resolve) => (release = resolve));
      if (!claim()) return 'given back';
      ran = true;
      return connection;
    });
    await expect(late).rejects.toBeInstanceOf(ServiceUnavailableError);
    release('connection');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(ran).toBe(false);
    await expect(withinAcquireTimeout(1_000, async (claim) => (claim() ? 'ran' : 'refused'))).resolves.toBe('ran');
  });
});
