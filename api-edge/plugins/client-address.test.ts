import { describe, expect, it } from 'vitest';
import { clientAddressOf, trustedProxies } from './client-address.ts';

describe('clientAddressOf', () => {
  const trusted = trustedProxies(['10.0.0.0/8', '127.0.0.1', 'fd00::/8']);

  it('takes the peer when no proxy is trusted, or the peer is not one', () => {
    expect(clientAddressOf('203.0.113.7', '198.51.100.1', undefined)).toBe('203.0.113.7');
    expect(clientAddressOf('203.0.113.7', '198.51.100.1', trusted)).toBe('203.0.113.7');
    expect(clientAddressOf('::ffff:203.0.113.7', null, trusted)).toBe('203.0.113.7');
    expect(clientAddressOf(undefined, '198.51.100.1', trusted)).toBe('unknown');
  });

  it('behind trusted proxies, takes the nearest address that is not a proxy; what the client wrote further left is ignored', () => {
    expect(clientAddressOf('10.1.2.3', '198.51.100.1', trusted)).toBe('198.51.100.1');
    expect(clientAddressOf('::ffff:10.1.2.3', '1.2.3.4, 198.51.100.1, 10.9.9.9', trusted)).toBe('198.51.100.1');
    expect(clientAddressOf('127.0.0.1', 'fd00::5, 2001:db8::1', trusted)).toBe('2001:db8::1');
    expect(clientAddressOf('10.1.2.3', '10.0.0.1, 10.0.0.2', trusted)).toBe('10.0.0.1');
    expect(clientAddressOf('10.1.2.3', null, trusted)).toBe('10.1.2.3');
  });

  it('refuses an entry that is neither an address nor a range', () => {
    expect(() => trustedProxies(['10.0.0.0/33'])).toThrow(/10\.0\.0\.0\/33/);
    expect(() => trustedProxies(['proxy.internal'])).toThrow(/neither/);
  });
});
