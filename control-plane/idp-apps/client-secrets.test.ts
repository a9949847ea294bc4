import { describe, expect, it } from 'vitest';
import { hashClientSecret, newClientSecret, verifyClientSecret } from './client-secrets.ts';

describe('client secrets', () => {
  it('are 256 random bits, and the hash takes only the secret it was made from', async () => {
    const secret = newClientSecret();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newClientSecret()).not.toBe(secret);
    const stored = await hashClientSecret(secret);
    expect(stored).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(stored).not.toContain(secret);
    expect(await verifyClientSecret(secret, stored)).toBe(true);
    expect(await verifyClientSecret(`${secret}x`, stored)).toBe(false);
    expect(await verifyClientSecret('', stored)).toBe(false);
  });

  it('salts each hash, and refuses a stored value that is not one', async () => {
    const secret = newClientSecret();
    const [a, b] = [await hashClientSecret(secret), await hashClientSecret(secret)];
    expect(a).not.toBe(b);
    expect(await verifyClientSecret(secret, b)).toBe(true);
    for (const stored of ['', 'plain', `bcrypt$${a.slice(7)}`, 'scrypt$16384$8$1$$']) expect(await verifyClientSecret(secret, stored)).toBe(false);
  });
});
