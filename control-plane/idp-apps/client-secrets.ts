import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** scrypt's cost (2^14), block size and parallelism: about 16 MiB and a few tens of milliseconds per check. */
const COST = { N: 16_384, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;

const derive = (secret: string, salt: Buffer, options: ScryptOptions, keyBytes: number) =>
  new Promise<Buffer>((resolve, reject) => scrypt(secret, salt, keyBytes, { ...options, maxmem: 64 * 1024 * 1024 }, (error, key) => (error ? reject(error) : resolve(key))));

/** A new client secret: 256 random bits, base64url (43 characters). */
export const newClientSecret = (): string => randomBytes(32).toString('base64url');

/** The stored form of a secret: `scrypt$N$r$p$<salt>$<key>`, salt and key base64url. */
export async function hashClientSecret(secret: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(secret, salt, COST, KEY_BYTES);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether `secret` is the one `stored` was made from; false for anything malformed. Constant time in the key. */
export async function verifyClientSecret(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(secret, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) }, expected.length);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
