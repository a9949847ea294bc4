import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The credential the edge sends the control plane when they run apart (`CONTROL_PLANE_TOKEN`): a
 * shared secret, since any pod of the cluster can reach the control plane's port.
 */
export const CONTROL_PLANE_TOKEN_HEADER = 'x-control-plane-token';

/** The shortest credential taken, in bytes. */
export const CONTROL_PLANE_TOKEN_MIN_BYTES = 32;

/** Why `value` cannot be the credential, in an operator's words; undefined when it can. */
export function controlPlaneTokenProblem(value: string): string | undefined {
  if (Buffer.byteLength(value) < CONTROL_PLANE_TOKEN_MIN_BYTES) return `must be at least ${CONTROL_PLANE_TOKEN_MIN_BYTES} bytes (openssl rand -base64 32)`;
  // It travels as a header value: printable ASCII without spaces.
  if (!/^[\x21-\x7e]+$/.test(value)) return 'must be printable ASCII without spaces (openssl rand -base64 32)';
  return undefined;
}

/** A fresh credential: 32 random bytes, base64url. */
export function generateControlPlaneToken(): string {
  return randomBytes(32).toString('base64url');
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * A check of a presented credential against the expected one, in constant time: both are hashed
 * first, so neither their bytes nor their lengths show in the time the comparison takes.
 */
export function controlPlaneTokenCheck(expected: string): (presented: string | undefined) => boolean {
  const want = digest(expected);
  return (presented) => presented !== undefined && timingSafeEqual(digest(presented), want);
}
