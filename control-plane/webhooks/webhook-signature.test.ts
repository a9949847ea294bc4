import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, parseSignature, parseTimestamp, signatureMatches, webhookSignature } from './webhook-signature.ts';

describe('webhook signatures', () => {
  const secret = newWebhookSecret();
  const body = Buffer.from('{"a": 1}');

  it('sign "<timestamp>.<body>" with HMAC-SHA256 keyed by the secret as written', () => {
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(`1700000000.{"a": 1}`)).digest('hex');
    expect(webhookSignature(secret, '1700000000', body)).toBe(expected);
    expect(signatureMatches(secret, '1700000000', body, expected)).toBe(true);
  });

  it('do not match another body, timestamp or secret', () => {
    const digest = webhookSignature(secret, '1700000000', body);
    expect(signatureMatches(secret, '1700000000', Buffer.from('{"a":1}'), digest)).toBe(false);
    expect(signatureMatches(secret, '1700000001', body, digest)).toBe(false);
    expect(signatureMatches(newWebhookSecret(), '1700000000', body, digest)).toBe(false);
  });

  it('read only the documented header forms', () => {
    const hex = 'ab'.repeat(32);
    expect(parseSignature(`sha256=${hex}`)).toBe(hex);
    expect(parseSignature(`SHA256=${hex.toUpperCase()}`)).toBe(hex);
    for (const value of [hex, `sha1=${hex}`, `sha256=${hex.slice(2)}`, `sha256=${hex}zz`, 'v1,abc']) expect(parseSignature(value), value).toBeUndefined();
    expect(parseTimestamp('1700000000')).toBe(1_700_000_000);
    for (const value of ['', '-1', '1.5', '1e9', '2024-01-01T00:00:00Z']) expect(parseTimestamp(value), value).toBeUndefined();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  });
});
