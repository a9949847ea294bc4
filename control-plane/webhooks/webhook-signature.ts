import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The request headers of an inbound delivery. */
export const WEBHOOK_HEADERS = {
  timestamp: 'X-Webhook-Timestamp',
  signature: 'X-Webhook-Signature',
  deliveryId: 'X-Webhook-Id',
} as const;

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;
/** Unix time in whole seconds. */
const TIMESTAMP = /^\d{1,12}$/;

/** A new endpoint secret: 32 random bytes, base64url, with a prefix that says what it is. */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

/** The hex HMAC-SHA256, keyed by the secret as written, of `<timestamp>.<body>`: what a sender puts in `X-Webhook-Signature` after `sha256=`. */
export function webhookSignature(secret: string, timestamp: string, body: Uint8Array): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

/** The Unix seconds of an `X-Webhook-Timestamp`, or undefined when it is not one. */
export const parseTimestamp = (value: string): number | undefined => (TIMESTAMP.test(value) ? Number(value) : undefined);

/** The hex digest of an `X-Webhook-Signature` (`sha256=<hex>`), lowercased; undefined when it has another form. */
export const parseSignature = (value: string): string | undefined => SIGNATURE.exec(value.trim())?.[1]!.toLowerCase();

/** Whether `digest` (from `parseSignature`) signs the timestamp and body with the secret; compared in constant time. */
export function signatureMatches(secret: string, timestamp: string, body: Uint8Array, digest: string): boolean {
  return timingSafeEqual(Buffer.from(webhookSignature(secret, timestamp, body), 'hex'), Buffer.from(digest, 'hex'));
}
