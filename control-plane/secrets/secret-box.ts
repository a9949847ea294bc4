import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Bytes of the operator key (`SECRETS_KEY`, base64). */
export const SECRETS_KEY_BYTES = 32;
/** What a sealed value starts with: plain secrets never do, so a column can hold both while old rows are sealed. */
const SEALED_PREFIX = 'sealed:v1:';

/** Seals and opens secrets the platform must keep usable (not only checkable), such as webhook secrets. */
export interface SecretBox {
  /** A short fingerprint of the key, written into each sealed value, so that a value sealed under another key says so. */
  readonly keyId: string;
  /** Fingerprints of the previous keys (`SECRETS_KEY_PREVIOUS`): values sealed under them still open, and are sealed again under the current key. */
  readonly previousKeyIds: readonly string[];
  /** `plain` encrypted and authenticated, bound to `context` (what the value belongs to): `sealed:v1:<keyId>:<iv>:<ciphertext>:<tag>`. */
  seal(plain: string, context: string): string;
  /** The plain text of a value `seal` made with this key or a previous one and the same `context`; throws, saying why, otherwise. */
  open(sealed: string, context: string): string;
}

/** Whether a stored value is sealed (rather than plain text written before sealing existed). */
export const isSealed = (stored: string): boolean => stored.startsWith(SEALED_PREFIX);

/** The fingerprint of the key a stored value was sealed under; undefined for a plain value. */
export const sealedKeyIdOf = (stored: string): string | undefined => (isSealed(stored) ? stored.slice(SEALED_PREFIX.length).split(':')[0] : undefined);

/** The SQL `like` pattern of values sealed under the key `keyId` (a fingerprint is hex: nothing to escape). */
export const sealedUnderPattern = (keyId: string): string => `${SEALED_PREFIX}${keyId}:%`;

/** A value sealed under another key, or altered, or moved to another record: the operator's to resolve. */
export class SecretUnsealError extends Error {}

/** A key's fingerprint: what sealed values name it by. */
export function secretsKeyIdOf(key: Uint8Array): string {
  if (key.length !== SECRETS_KEY_BYTES) throw new Error(`a secrets key is ${SECRETS_KEY_BYTES} bytes, not ${key.length}`);
  return createHash('sha256').update('svc-secrets-key-id\0').update(key).digest('hex').slice(0, 12);
}

/**
 * A box of AES-256-GCM with the operator's 32-byte key: a random 96-bit IV per value, the
 * context as additional authenticated data (so a sealed value copied onto another record does
 * not open there), and the key's fingerprint in the value. Values sealed under one of the
 * `previous` keys (the operator is changing the key) still open; new values are sealed under `key`.
 */
export function createSecretBox(key: Uint8Array, previous: readonly Uint8Array[] = []): SecretBox {
  const keyId = secretsKeyIdOf(key);
  const keys = new Map<string, Buffer>([[keyId, Buffer.from(key)]]);
  for (const old of previous) if (!keys.has(secretsKeyIdOf(old))) keys.set(secretsKeyIdOf(old), Buffer.from(old));
  const secretKey = keys.get(keyId)!;
  const previousKeyIds = [...keys.keys()].filter((id) => id !== keyId);
  return {
    keyId,
    previousKeyIds,
    seal(plain, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(ALGORITHM, secretKey, iv, { authTagLength: TAG_BYTES }).setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `${SEALED_PREFIX}${keyId}:${[iv, ciphertext, cipher.getAuthTag()].map((part) => part.toString('base64url')).join(':')}`;
    },
    open(sealed, context) {
      if (!isSealed(sealed)) throw new SecretUnsealError('the stored value is not a sealed secret');
      const [sealedKeyId, iv, ciphertext, tag] = sealed.slice(SEALED_PREFIX.length).split(':');
      if (!sealedKeyId || iv === undefined || ciphertext === undefined || tag === undefined) throw new SecretUnsealError('the sealed secret is malformed');
      const sealedWith = keys.get(sealedKeyId);
      if (!sealedWith) {
        const previousNote = previousKeyIds.length > 0 ? ` and previous key id ${previousKeyIds.join(', ')}` : '';
        throw new SecretUnsealError(
          `a secret was sealed with another SECRETS_KEY (key id ${sealedKeyId}; this process has key id ${keyId}${previousNote}): start it with the key it was sealed with, in SECRETS_KEY_PREVIOUS while changing keys`,
        );
      }
      try {
        const decipher = createDecipheriv(ALGORITHM, sealedWith, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES }).setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretUnsealError('a sealed secret does not open with SECRETS_KEY: it was altered, or belongs to another record');
      }
    },
  };
}

/** A new random operator key (development and tests; production gives `SECRETS_KEY`). */
export const newSecretsKey = (): Buffer => randomBytes(SECRETS_KEY_BYTES);
