import { describe, expect, it } from 'vitest';
import { emptyResealReport, resealed } from './reseal.ts';
import { createSecretBox, isSealed, newSecretsKey, sealedKeyIdOf, SecretUnsealError } from './secret-box.ts';

describe('secret box', () => {
  const box = createSecretBox(newSecretsKey());

  it('seals to a value holding no plain text, different each time, that opens in its own context only', () => {
    const secret = 'whsec_example-secret-of-forty-odd-characters';
    const first = box.seal(secret, 'endpoint:a');
    const second = box.seal(secret, 'endpoint:a');
    expect(isSealed(first)).toBe(true);
    expect(isSealed(secret)).toBe(false);
    expect(first).not.toContain(secret);
    expect(first).not.toContain(Buffer.from(secret).toString('base64url').slice(0, 12));
    expect(second).not.toBe(first);
    expect(box.open(first, 'endpoint:a')).toBe(secret);
    expect(() => box.open(first, 'endpoint:b')).toThrow(SecretUnsealError);
  });

  it('refuses an altered value, a value of another key (naming both key ids) and a malformed one', () => {
    const sealed = box.seal('whsec_x', 'c');
    const parts = sealed.split(':');
    const ciphertext = Buffer.from(parts[4]!, 'base64url');
    ciphertext[0] = ciphertext[0]! ^ 1;
    parts[4] = ciphertext.toString('base64url');
    expect(() => box.open(parts.join(':'), 'c')).toThrow(/altered/);
    const other = createSecretBox(newSecretsKey());
    expect(() => other.open(sealed, 'c')).toThrow(new RegExp(`key id ${box.keyId}.*key id ${other.keyId}`));
    expect(() => box.open('sealed:v1:zz', 'c')).toThrow(/malformed/);
    expect(() => box.open('whsec_plain', 'c')).toThrow(SecretUnsealError);
    expect(() => createSecretBox(Buffer.alloc(16))).toThrow(/32 bytes/);
  });

  it('opens values sealed under a previous key and seals anew under the current one; a value under neither is counted, not changed', () => {
    const [oldKey, newKey, strayKey] = [newSecretsKey(), newSecretsKey(), newSecretsKey()];
    const old = createSecretBox(oldKey);
    const changing = createSecretBox(newKey, [oldKey, newKey]);
    expect(changing.previousKeyIds).toEqual([old.keyId]);
    const sealedOld = old.seal('whsec_old', 'c');
    expect(changing.open(sealedOld, 'c')).toBe('whsec_old');
    const report = emptyResealReport();
    const again = resealed(changing, sealedOld, 'c', report)!;
    expect(sealedKeyIdOf(again)).toBe(changing.keyId);
    expect(createSecretBox(newKey).open(again, 'c')).toBe('whsec_old');
    expect(resealed(changing, again, 'c', report)).toBeUndefined();
    expect(sealedKeyIdOf(resealed(changing, 'whsec_plain', 'c', report)!)).toBe(changing.keyId);
    const stray = createSecretBox(strayKey).seal('whsec_stray', 'c');
    expect(resealed(changing, stray, 'c', report)).toBeUndefined();
    expect(report.unreadable).toEqual({ [sealedKeyIdOf(stray)!]: 1 });
    expect(() => changing.open(stray, 'c')).toThrow(/SECRETS_KEY_PREVIOUS/);
  });
});
